/**
 * Live updates, through the compiled executable over real HTTP: changes arrive on the stream, a reader that never reads
 * (a raw socket) is dropped instead of making the server buffer, an address is held to its bound, and stopping the
 * server ends open streams at once. And `startServer` (embedding) stops with streams open.
 */
import { afterEach, describe, expect, test } from 'bun:test'
import { connect, type Socket } from 'node:net'
import { type RunningServer, startServer } from '../../src/index.ts'
import { type RunningBinary, startBinary } from '../support/binary.ts'
import { dataOf, type SseReader, sse } from './sse.ts'

const KEY = 'events-binary-key'
const asService = { 'x-api-key': KEY, 'content-type': 'application/json' }

const running: RunningBinary[] = []
const servers: RunningServer[] = []
const streams: SseReader[] = []
const sockets: Socket[] = []
afterEach(async () => {
  for (const socket of sockets.splice(0)) socket.destroy()
  await Promise.all(streams.splice(0).map((stream) => stream.close()))
  await Promise.all(running.splice(0).map((binary) => binary.stop().catch(() => 0)))
  await Promise.all(servers.splice(0).map((server) => server.stop()))
})

async function start(args: string[] = []) {
  const binary = await startBinary(['--port', '0', '--api-key', KEY, '--log', 'off', ...args])
  running.push(binary)
  return binary
}

async function follow(url: string, headers: Record<string, string> = {}) {
  const response = await fetch(`${url}/api/v1/events`, { headers })
  expect(response.status).toBe(200)
  const stream = sse(response)
  streams.push(stream)
  const ready = await stream.nextEvent()
  expect(ready.event).toBe('ready')
  return { stream, ready }
}

const createArtist = (url: string, body: object) =>
  fetch(`${url}/api/v1/artists`, { method: 'POST', headers: asService, body: JSON.stringify(body) })

describe('the event stream over HTTP (compiled executable)', () => {
  test('a change made by one client reaches another client’s stream; Last-Event-ID resumes it', async () => {
    const { url } = await start()
    const { stream, ready } = await follow(url)
    const created = await createArtist(url, { name: 'Gustavo Cerati', band: 'Soda Stereo' })
    expect(created.status).toBe(201)
    const artist = (await created.json()) as { id: number; name: string }
    const event = await stream.nextEvent()
    expect(event.event).toBe('artist-created')
    expect(dataOf(event)).toEqual({
      url: `/api/v1/artists/${artist.id}`,
      artist,
      at: expect.any(String),
      by: 'service',
    })
    await stream.close()
    await createArtist(url, { name: 'Zeta Bosio' })
    const back = sse(await fetch(`${url}/api/v1/events`, { headers: { 'last-event-id': event.id as string } }))
    streams.push(back)
    const missed = await back.nextEvent()
    expect(missed.event).toBe('artist-created')
    expect(dataOf(missed).artist.name).toBe('Zeta Bosio')
    const again = await back.nextEvent()
    expect(again.event).toBe('ready')
    expect(again.id).toBe(missed.id)
    expect(again.id).not.toBe(ready.id)
  })

  test('a reader that never reads is dropped: the server does not keep what it cannot send', async () => {
    const { url } = await start()
    const { port } = new URL(url)
    const socket = connect(Number(port), '127.0.0.1')
    sockets.push(socket)
    await new Promise<void>((resolve) => socket.once('connect', () => resolve()))
    socket.write('GET /api/v1/events HTTP/1.1\r\nHost: localhost\r\n\r\n')
    // Never read, until the writes are done: the kernel's buffers fill, then the server's bound is passed.
    socket.pause()
    let closed = false
    socket.once('close', () => {
      closed = true
    })
    // 400 changes of about 30 KB each (3-byte characters): 12 MB, far more than the socket buffers hold.
    const description = '€'.repeat(10_000)
    let sent = 0
    for (let batch = 0; batch < 40; batch++) {
      const answers = await Promise.all(
        Array.from({ length: 10 }, (_, i) => createArtist(url, { name: `Loud ${batch}-${i}`, description })),
      )
      expect(answers.every((answer) => answer.status === 201)).toBe(true)
      sent += 10
    }
    // Now read everything the connection still holds: it ends (the server dropped it) well short of all changes.
    let received = 0
    socket.on('data', (chunk: Buffer) => {
      received += chunk.length
    })
    socket.resume()
    for (let i = 0; i < 200 && !closed; i++) await Bun.sleep(50)
    expect(closed).toBe(true)
    expect(received).toBeLessThan(sent * 30_000)
    // The server serves on, streams included.
    const { stream } = await follow(url)
    await createArtist(url, { name: 'After the slow reader' })
    expect(dataOf(await stream.nextEvent()).artist.name).toBe('After the slow reader')
  }, 60_000)

  test('one address may hold 16 streams; the 17th is refused with 429 and Retry-After', async () => {
    const { url } = await start()
    for (let i = 0; i < 16; i++) await follow(url)
    const refused = await fetch(`${url}/api/v1/events`)
    expect(refused.status).toBe(429)
    expect(refused.headers.get('retry-after')).toBe('30')
    expect(refused.headers.get('content-type')).toBe('application/problem+json')
    await refused.body?.cancel()
    await streams.shift()?.close()
    // Its place is free once the server sees the stream closed.
    let status = 0
    for (let i = 0; i < 50 && status !== 200; i++) {
      const again = await fetch(`${url}/api/v1/events`)
      status = again.status
      if (status === 200) streams.push(sse(again))
      else await again.body?.cancel()
      await Bun.sleep(20)
    }
    expect(status).toBe(200)
  })

  test('stopping the server ends the open streams at once', async () => {
    const binary = await start()
    const { stream } = await follow(binary.url)
    const code = binary.stop()
    expect(await stream.ended(10_000)).toBe(true)
    expect(await code).toBe(0)
  })

  test('startServer: stop() resolves with streams open, and they end', async () => {
    const server = await startServer({ apiKeys: [KEY] })
    const { stream } = await follow(server.url)
    await createArtist(server.url, { name: 'Embedded' })
    expect((await stream.nextEvent()).event).toBe('artist-created')
    await server.stop()
    expect(await stream.ended(5000)).toBe(true)
  })
})
