/**
 * Reading an event stream (`GET /api/v1/events`) in tests, as EventSource parses it: events with their id, name
 * and data, and comments (the heartbeats), from a Response read in-process or over HTTP.
 */

/** One parsed message: an event, or a comment line. */
export interface SseMessage {
  id?: string
  event?: string
  data?: string
  comment?: string
  retry?: number
}

/** A stream being read: the next message, with a deadline so a missing event fails the test instead of hanging. */
export interface SseReader {
  response: Response
  next(timeoutMs?: number): Promise<SseMessage>
  /** The next message that is an event (skipping comments and `retry`). */
  nextEvent(timeoutMs?: number): Promise<SseMessage>
  /** Resolves with true once the stream ends (the server closed it), false if it is still open after `timeoutMs`. */
  ended(timeoutMs?: number): Promise<boolean>
  close(): Promise<void>
}

/** Reads `response`'s body as an event stream. */
export function sse(response: Response): SseReader {
  const body = response.body
  if (!body) throw new Error('the response has no body')
  const reader = body.getReader()
  const decoder = new TextDecoder()
  let buffer = ''
  let done = false
  const queue: SseMessage[] = []
  let pump: Promise<void> | undefined

  const parse = () => {
    for (;;) {
      const end = buffer.indexOf('\n\n')
      if (end < 0) return
      const block = buffer.slice(0, end)
      buffer = buffer.slice(end + 2)
      const message: SseMessage = {}
      for (const line of block.split('\n')) {
        if (line.startsWith(':')) message.comment = line.slice(1).trim()
        else {
          const colon = line.indexOf(':')
          const field = colon < 0 ? line : line.slice(0, colon)
          const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '')
          if (field === 'id') message.id = value
          else if (field === 'event') message.event = value
          else if (field === 'data') message.data = message.data === undefined ? value : `${message.data}\n${value}`
          else if (field === 'retry') message.retry = Number(value)
        }
      }
      queue.push(message)
    }
  }

  const readMore = () => {
    pump ??= reader.read().then(
      ({ value, done: finished }) => {
        pump = undefined
        if (finished) done = true
        else buffer += decoder.decode(value, { stream: true })
        parse()
      },
      () => {
        pump = undefined
        done = true
      },
    )
    return pump
  }

  const within = async <T>(work: () => Promise<T | undefined>, timeoutMs: number, what: string): Promise<T> => {
    const deadline = Date.now() + timeoutMs
    for (;;) {
      const found = await work()
      if (found !== undefined) return found
      if (done) throw new Error(`the stream ended before ${what}`)
      const left = deadline - Date.now()
      if (left <= 0) throw new Error(`no ${what} within ${timeoutMs} ms`)
      await Promise.race([readMore(), Bun.sleep(left)])
    }
  }

  const next = (timeoutMs = 5000) => within(async () => queue.shift(), timeoutMs, 'message')
  const nextEvent = (timeoutMs = 5000) =>
    within(
      async () => {
        while (queue.length > 0) {
          const message = queue.shift() as SseMessage
          if (message.event !== undefined || message.data !== undefined) return message
        }
        return undefined
      },
      timeoutMs,
      'event',
    )
  const ended = async (timeoutMs = 5000) => {
    const deadline = Date.now() + timeoutMs
    while (!done) {
      const left = deadline - Date.now()
      if (left <= 0) return false
      await Promise.race([readMore(), Bun.sleep(left)])
    }
    return true
  }
  return {
    response,
    next,
    nextEvent,
    ended,
    close: async () => {
      await reader.cancel().catch(() => {})
    },
  }
}

/** The data of an event, parsed. */
// biome-ignore lint/suspicious/noExplicitAny: tests read whatever JSON an event carries, field by field
export const dataOf = (message: SseMessage): any => JSON.parse(message.data ?? 'null')
