import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { ACCOUNT_LIMITS } from '../../src/accounts/service.ts'
import { EVENT_STREAM_LIMITS } from '../../src/events/streams.ts'
import { ensureBinary, type RunningBinary, startBinary } from '../support/binary.ts'

// The executable behind a proxy on its own machine, as a proxy reaches it: from 127.0.0.1, naming each client in
// X-Forwarded-For. With --trust-proxy, every per-address rule counts the client the proxy names, so one client that
// guesses wrong locks only itself out; without it, those headers are anyone's to write, and are ignored.

const KEY = 'rl_trusted_proxy_test_key_0123456789'
const { limit } = ACCOUNT_LIMITS.credentialFailuresPerClient
const GUESSER = '203.0.113.7'
const NEIGHBOUR = '198.51.100.9'

let trusting: RunningBinary
let plain: RunningBinary

beforeAll(async () => {
  await ensureBinary()
  ;[trusting, plain] = await Promise.all([
    startBinary(['--port', '0', '--data', ':memory:', '--api-key', KEY, '--trust-proxy', '127.0.0.1', '--log', 'off']),
    startBinary(['--port', '0', '--data', ':memory:', '--api-key', KEY, '--log', 'off']),
  ])
}, 60_000)
afterAll(async () => {
  await Promise.all([trusting?.stop(), plain?.stop()])
})

const write = (server: RunningBinary, client: string, key: string) =>
  fetch(`${server.url}/api/v1/artists`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': key, 'x-forwarded-for': client },
    body: JSON.stringify({ name: 'Pedro Aznar' }),
  })

/** Sends `limit` wrong keys from `client`; each must be a 401. */
async function guess(server: RunningBinary, client: string) {
  for (let i = 0; i < limit; i++) {
    const response = await write(server, client, `wrong-${i}`)
    expect(response.status).toBe(401)
    await response.body?.cancel()
  }
}

describe('--trust-proxy 127.0.0.1', () => {
  test(`${limit} wrong keys from one client brake that client only; another's right key works`, async () => {
    await guess(trusting, GUESSER)
    const braked = await write(trusting, GUESSER, KEY)
    expect(braked.status).toBe(429)
    expect(Number(braked.headers.get('retry-after'))).toBeGreaterThan(0)
    expect((await write(trusting, NEIGHBOUR, KEY)).status).toBe(201)
    // A client behind the guesser's proxy hop cannot pass as the neighbour by writing X-Forwarded-For itself: the
    // proxy appends the address it saw, and that right-most one counts.
    expect((await write(trusting, `${NEIGHBOUR}, ${GUESSER}`, KEY)).status).toBe(429)
  })

  test('/openapi.json names the scheme and host the client asked the proxy for', async () => {
    const response = await fetch(`${trusting.url}/openapi.json`, {
      headers: { 'x-forwarded-for': NEIGHBOUR, 'x-forwarded-proto': 'https', 'x-forwarded-host': 'rock.example' },
    })
    const document = (await response.json()) as { servers: { url: string }[] }
    expect(document.servers[0]?.url).toBe('https://rock.example')
    // A client's own Forwarded header passes through the documented proxies as it came: it is not read.
    const viaForwarded = await fetch(`${trusting.url}/openapi.json`, {
      headers: { forwarded: 'for=198.51.100.10;proto=https;host="evil.example"' },
    })
    expect(((await viaForwarded.json()) as { servers: { url: string }[] }).servers[0]?.url).toBe(trusting.url)
  })

  test(`${EVENT_STREAM_LIMITS.perClient + 1} event streams from as many clients are all served`, async () => {
    const controller = new AbortController()
    try {
      const streams = await Promise.all(
        Array.from({ length: EVENT_STREAM_LIMITS.perClient + 1 }, (_, i) =>
          fetch(`${trusting.url}/api/v1/events`, {
            headers: { 'x-forwarded-for': `192.0.2.${i + 1}` },
            signal: controller.signal,
          }),
        ),
      )
      expect(streams.map((stream) => stream.status)).toEqual(streams.map(() => 200))
    } finally {
      controller.abort()
    }
  })
})

describe('without --trust-proxy', () => {
  test("X-Forwarded-For is anyone's to write, so it is ignored: the guesses brake the address they came from", async () => {
    await guess(plain, GUESSER)
    expect((await write(plain, NEIGHBOUR, KEY)).status).toBe(429)
  })

  test('/openapi.json names the origin the request reached, whatever the headers say', async () => {
    const response = await fetch(`${plain.url}/openapi.json`, {
      headers: { 'x-forwarded-proto': 'https', 'x-forwarded-host': 'rock.example' },
    })
    expect(((await response.json()) as { servers: { url: string }[] }).servers[0]?.url).toBe(plain.url)
  })
})
