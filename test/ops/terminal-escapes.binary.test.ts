import { afterEach, beforeAll, beforeEach, describe, expect, spyOn, test } from 'bun:test'
import { connect } from 'node:net'
import { join } from 'node:path'
import { createLogger, flushLog } from '../../src/log.ts'
import { ensureBinary, type RunningBinary, removeDir, runBinary, startBinary, tempDir } from '../support/binary.ts'

// Terminal escapes in what visitors give: a sign-up name holding ESC sequences (clear the screen, move the cursor,
// set the window title), a newline (a forged row), C1's CSI, bidi overrides; a CONNECT target holding the same (Bun
// passes it to the app as it was sent). Whatever the executable prints of them, `rock-legends users` on stdout and
// stderr, the access log pretty or JSON, reaches the terminal with no control character in it: each is shown escaped.

/** Everything a terminal acts on, but the newlines between lines (and the tab, harmless). */
// biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is the point.
const CONTROL = /[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]/u

const NAME = 'Ana\x1b[2J\x1b[H\x1b]0;pwned\x07\u202eanA\u009b31m\n99  forged  row'
/** How the name reads once escaped. */
const SHOWN = 'Ana\\x1b[2J\\x1b[H\\x1b]0;pwned\\x07\\u{202e}anA\\x9b31m\\n99  forged  row'
const EMAIL = 'ana@rock-legends.com'

/** Runs `rock-legends users …args` to completion. */
const users = (args: string[]) => runBinary(['users', ...args])

async function signUp(url: string) {
  const response = await fetch(`${url}/api/v1/user/signup`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ name: NAME, email: EMAIL, password: 'a-good-password' }),
  })
  expect(response.status).toBe(201)
}

/** Sends a raw request line (UTF-8) and waits for the server to close the connection. */
const sendRaw = (port: number, requestLine: string) =>
  new Promise<void>((resolve) => {
    const socket = connect(port, '127.0.0.1')
    const timer = setTimeout(() => socket.destroy(), 3000)
    socket.on('data', () => {})
    socket.on('close', () => {
      clearTimeout(timer)
      resolve()
    })
    socket.on('error', () => {})
    socket.write(`${requestLine} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n`)
  })

let dir: string
let file: string
const running: RunningBinary[] = []
const start = async (args: string[]) => {
  const server = await startBinary(['--port', '0', '--data', file, ...args])
  running.push(server)
  return server
}

beforeAll(() => ensureBinary(), 120_000)
beforeEach(() => {
  dir = tempDir('rock-legends-escapes-')
  file = join(dir, 'db.json')
})
afterEach(async () => {
  for (const server of running.splice(0)) await server.stop('SIGKILL')
  removeDir(dir)
})

describe('rock-legends users prints a name holding terminal escapes escaped', () => {
  test('list, as a table and as JSON, on the file and through the server; a change names it escaped', async () => {
    const server = await start(['--log', 'off'])
    await signUp(server.url)

    // Through the running server: the name comes from its answer.
    const through = await users(['list', '--data', file])
    expect(through.code).toBe(0)
    expect(through.stderr).toContain('through the server')
    await server.stop()
    running.length = 0
    // The server stopped: the name comes from the file.
    const direct = await users(['list', '--data', file])
    expect(direct.code).toBe(0)
    for (const { stdout, stderr } of [through, direct]) {
      expect(stdout).not.toMatch(CONTROL)
      expect(stderr).not.toMatch(CONTROL)
      const lines = stdout.trimEnd().split('\n')
      // The header and one row: the newline in the name forged none.
      expect(lines).toHaveLength(2)
      expect(lines[1]?.replace(/^1 +/, '')).toStartWith(`${SHOWN}  ${EMAIL}  `)
    }

    const json = await users(['list', '--data', file, '--json'])
    expect(json.stdout).not.toMatch(CONTROL)
    expect(JSON.parse(json.stdout).data[0].name).toBe(NAME)

    const disabled = await users(['disable', EMAIL, '--data', file])
    expect(disabled.code).toBe(0)
    expect(disabled.stdout).not.toMatch(CONTROL)
    expect(disabled.stdout).toContain(`disabled ${EMAIL} (account 1, ${SHOWN})`)
  })
})

describe('the access log shows the control characters of a request target escaped', () => {
  // Bun percent-encodes what an origin-form target holds, but a CONNECT target reaches the app as it was sent.
  const TARGET = 'a\u202ebc\u009b2J\u0085:443'

  test.each([
    ['pretty', 'CONNECT a\\u{202e}bc\\x9b2J\\x85:443 404'],
    ['json', '"method":"CONNECT","path":"a\\u202ebc\\u009b2J\\u0085:443","status":404'],
  ])('--log %s', async (mode, shown) => {
    const server = await start(['--log', mode])
    await sendRaw(Number(new URL(server.url).port), `CONNECT ${TARGET}`)
    await server.stop()
    const log = await server.stderr()
    expect(log).toContain(shown)
    expect(log).not.toMatch(CONTROL)
    if (mode === 'json')
      for (const line of log.trimEnd().split('\n')) {
        const entry = JSON.parse(line)
        if (entry.message === 'request') expect(entry.path).toBe(TARGET)
      }
  })
})

describe('the log lines that quote what a request carried', () => {
  test.each(['pretty', 'json'] as const)(
    '--log %s: an error message holding a newline and escapes stays one line, shown escaped',
    (mode) => {
      flushLog()
      const spy = spyOn(console, 'error').mockImplementation(() => {})
      try {
        const log = createLogger(mode)
        log.info(`looked up ${NAME}`, { name: NAME })
        log.error(`failed for ${NAME}`, new Error(`bad name ${NAME}`))
        const text = spy.mock.calls.map((call) => String(call[0])).join('\n')
        expect(text).not.toMatch(CONTROL)
        expect(text).not.toContain('\n99  forged  row')
        if (mode === 'json') for (const line of text.split('\n')) expect(JSON.parse(line).message).toContain(NAME)
        else expect(text).toContain(`looked up ${SHOWN} name=${SHOWN}`)
      } finally {
        spy.mockRestore()
      }
    },
  )
})
