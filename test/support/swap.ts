import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { freePort } from './binary.ts'

/**
 * Load while a server is replaced: clients that read and write without a pause, on keep-alive connections as
 * Bun's fetch keeps them, while `swap` runs. Every answer is counted by its status, every failure to get one by its
 * error, and every artist created is named, so that a test can check that none was lost. Used by the takeover tests
 * and by bench/takeover.ts.
 */

/** What the clients saw. */
export interface SwapLoad {
  reads: number
  writes: number
  /** Answers other than 200 (reads) and 201 (writes), and requests that got no answer, each with what it got. */
  failures: string[]
  /** The ids of the artists the writes created, as their answers said. */
  created: number[]
  /** How long `swap` took, in milliseconds. */
  swapMs: number
  /** The longest any request took to be answered (or to fail), in milliseconds. */
  slowestMs: number
  /** Requests sent while `swap` ran, and after it: the swap was made under load, and the load went on. */
  sentDuring: number
  sentAfter: number
}

/**
 * Runs `clients` loops of alternating reads (`GET /api/v1/artists?limit=5`) and writes (`POST /api/v1/artists` with
 * `key`) against `base` for `beforeMs`, then while `swap` runs, then for `afterMs` more.
 */
export async function loadDuringSwap(options: {
  base: string
  key: string
  clients: number
  /** Whether each client keeps its connection for its next request (Bun's fetch does by default). */
  keepAlive?: boolean
  /** Trust any certificate: for a proxy in front with a self-signed one. */
  insecure?: boolean
  beforeMs: number
  afterMs: number
  swap: () => Promise<void>
}): Promise<SwapLoad> {
  const { base, key, clients, keepAlive = true, insecure = false, beforeMs, afterMs, swap } = options
  const connection = { keepalive: keepAlive, ...(insecure ? { tls: { rejectUnauthorized: false } } : {}) }
  const load: SwapLoad = {
    reads: 0,
    writes: 0,
    failures: [],
    created: [],
    swapMs: 0,
    slowestMs: 0,
    sentDuring: 0,
    sentAfter: 0,
  }
  let running = true
  let phase: 'before' | 'during' | 'after' = 'before'
  const loop = async (n: number) => {
    for (let i = 0; running; i++) {
      const write = i % 2 === 1
      const sent = performance.now()
      if (phase === 'during') load.sentDuring++
      else if (phase === 'after') load.sentAfter++
      try {
        if (write) {
          load.writes++
          const response = await fetch(`${base}/api/v1/artists`, {
            ...connection,
            method: 'POST',
            headers: { 'x-api-key': key, 'content-type': 'application/json' },
            body: JSON.stringify({ name: `Swap ${n}-${i}` }),
          })
          const body = await response.text()
          if (response.status === 201) load.created.push((JSON.parse(body) as { id: number }).id)
          else load.failures.push(`POST ${response.status} ${body.slice(0, 200)}`)
        } else {
          load.reads++
          const response = await fetch(`${base}/api/v1/artists?limit=5`, connection)
          const body = await response.text()
          if (response.status !== 200) load.failures.push(`GET ${response.status} ${body.slice(0, 200)}`)
        }
      } catch (error) {
        load.failures.push(`${write ? 'POST' : 'GET'} ${(error as Error).name}: ${(error as Error).message}`)
      }
      load.slowestMs = Math.max(load.slowestMs, performance.now() - sent)
    }
  }
  const loops = Array.from({ length: clients }, (_, n) => loop(n))
  await Bun.sleep(beforeMs)
  const started = performance.now()
  phase = 'during'
  await swap()
  phase = 'after'
  load.swapMs = performance.now() - started
  await Bun.sleep(afterMs)
  running = false
  await Promise.all(loops)
  return load
}

/**
 * nginx in front of the server on `upstreamPort`, configured as docs/operations.md's first nginx block says (TLS with
 * a self-signed certificate made in `dir`, `proxy_pass` to the port), listening on a free port of loopback.
 */
export async function nginxInFront(dir: string, upstreamPort: number): Promise<{ url: string; stop(): void }> {
  const { blocks, makeCertificate, nginxConfig, PROGRAMS } = await import('./proxies.ts')
  const { cert, key } = makeCertificate(dir)
  const listen = freePort()
  const file = join(dir, 'nginx.conf')
  writeFileSync(file, nginxConfig({ dir, cert, key }, blocks('nginx')[0] as string, listen, { 3000: upstreamPort }))
  const nginx = Bun.spawn([PROGRAMS.nginx, '-p', dir, '-c', file, '-g', 'daemon off;'], { stderr: 'pipe' })
  const url = `https://127.0.0.1:${listen}`
  const deadline = Date.now() + 10_000
  for (;;) {
    const status = await fetch(`${url}/livez`, { tls: { rejectUnauthorized: false } }).then(
      (response) => response.status,
      () => 0,
    )
    if (status === 200) break
    if (Date.now() > deadline) throw new Error(`nginx did not answer: ${await new Response(nginx.stderr).text()}`)
    await Bun.sleep(50)
  }
  return { url, stop: () => nginx.kill() }
}
