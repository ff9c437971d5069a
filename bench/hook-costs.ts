/**
 * `bun bench/hook-costs.ts [ROUNDS] [SECONDS] [ONLY]`: what each kind of Elysia hook costs a request, over a socket. One
 * route, `GET /api/v1/artists/:id`, answers the same bytes (an artist's JSON with rock-legends' headers) in every
 * variant below, each in its own process; a bare `Bun.serve` answering those bytes is the yardstick. The servers are
 * loaded side by side with `wrk -t2 -c32`, taking turns (the order rotated every round); the report gives, per variant,
 * the median over the rounds of its req/s over the bare server's in the same round, and its CPU per request
 * (/proc/PID/stat). Each hook is an empty function that takes what rock-legends' hooks take, so the figure is the price
 * of the hook's kind alone.
 *
 * `bun bench/hook-costs.ts serve VARIANT` runs one server and prints its port.
 */

import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Server } from 'bun'
import { Elysia } from 'elysia'
import { requestIdOf } from '../src/http/request-log.ts'
import { requestTarget } from '../src/http/request-target.ts'
import { createLogger } from '../src/log.ts'

const BODY = JSON.stringify({
  id: 500,
  name: 'Luis Alberto Spinetta',
  band: 'Almendra',
  description: 'Poet of Argentine rock, from Almendra to Pescado Rabioso, Invisible and Spinetta Jade.',
  albums: [1, 2, 3, 4, 5],
})
const HEADERS = {
  'content-type': 'application/json',
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  'referrer-policy': 'no-referrer',
}
const answer = () => new Response(BODY, { headers: HEADERS })
const PATH = '/api/v1/artists/:id'

/** A variant: a bare `Bun.serve` with its own `fetch`, or an Elysia app with hooks added before its one route. */
type Variant =
  | { fetch: (request: Request, server: Pick<Server<undefined>, 'requestIP'>) => Response }
  | { hooks: (app: Elysia) => unknown }

const access = createLogger('pretty').access

/** The variants, in the order of the report; the first is the yardstick. */
const VARIANTS: Record<string, Variant> = {
  'bare Bun.serve': { fetch: answer },
  // What the access log's pieces cost a bare server: reading the URL (Bun builds it from the host and the path) or a
  // header (the first read builds the request's Headers), a request id in the answer, the whole access line.
  'bare Bun.serve reading request.url': { fetch: (r) => (r.url.charCodeAt(0) ? answer() : answer()) },
  'bare Bun.serve reading a header': { fetch: (r) => (r.headers.get('x-request-id') ? answer() : answer()) },
  'bare Bun.serve, a UUIDv7 set on the Response': {
    fetch: () => {
      const response = answer()
      response.headers.set('x-request-id', Bun.randomUUIDv7())
      return response
    },
  },
  'bare Bun.serve, a UUIDv7 in the init headers': {
    fetch: () => new Response(BODY, { headers: { ...HEADERS, 'x-request-id': Bun.randomUUIDv7() } }),
  },
  'bare Bun.serve, the request id as rock-legends makes it': {
    fetch: (r) => {
      const response = answer()
      response.headers.set('x-request-id', requestIdOf(r))
      return response
    },
  },
  'bare Bun.serve, the request id and the access line (pretty, into stderr)': {
    fetch: (r, server) => {
      const started = performance.now()
      const response = answer()
      const requestId = requestIdOf(r)
      response.headers.set('x-request-id', requestId)
      const durationMs = performance.now() - started
      const client = server.requestIP(r)?.address ?? 'in-process'
      const userAgent = r.headers.get('user-agent') ?? undefined
      access?.({ method: r.method, path: requestTarget(r.url), status: 200, durationMs, requestId, client, userAgent })
      return response
    },
  },
  'bare Elysia, one route': { hooks: () => {} },
  '+ onRequest ()': { hooks: (app) => app.onRequest(() => {}) },
  '+ onRequest ({ request })': { hooks: (app) => app.onRequest(({ request }) => void request) },
  '+ global transform ({ request })': {
    hooks: (app) => app.onTransform({ as: 'global' }, ({ request }) => void request),
  },
  '+ global beforeHandle ({ request })': {
    hooks: (app) => app.onBeforeHandle({ as: 'global' }, ({ request }) => void request),
  },
  '+ global mapResponse ({ responseValue, set })': {
    hooks: (app) => app.mapResponse({ as: 'global' }, ({ responseValue, set }) => void [responseValue, set]),
  },
  '+ global afterResponse ({ request, set, responseValue })': {
    hooks: (app) =>
      app.onAfterResponse({ as: 'global' }, ({ request, set, responseValue }) => void [request, set, responseValue]),
  },
  '+ onError ({ code, error, request, set })': {
    hooks: (app) => app.onError({ as: 'global' }, ({ code, error, request, set }) => void [code, error, request, set]),
  },
}

/** Starts one variant on a free loopback port; its port. */
function serve(variant: Variant): number | undefined {
  if ('fetch' in variant) return Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: variant.fetch }).port
  const app = new Elysia()
  variant.hooks(app)
  app.get(PATH, ({ params }) => (params.id ? answer() : answer()))
  app.listen({ port: 0, hostname: '127.0.0.1', development: false, reusePort: false })
  return app.server?.port
}

/** User and system CPU time of a process so far, in seconds. */
function cpuSeconds(pid: number): number {
  const fields = (readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1] ?? '').split(' ')
  return (Number(fields[11]) + Number(fields[12])) / 100
}

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b)
  const middle = Math.floor(sorted.length / 2)
  return sorted.length % 2
    ? (sorted[middle] as number)
    : ((sorted[middle - 1] as number) + (sorted[middle] as number)) / 2
}

function wrk(port: number, seconds: number) {
  const out = Bun.spawnSync(['wrk', '-t2', '-c32', `-d${seconds}s`, `http://127.0.0.1:${port}/api/v1/artists/500`])
  const text = out.stdout.toString()
  return {
    rate: Number(/Requests\/sec:\s+([\d.]+)/.exec(text)?.[1]),
    requests: Number(/(\d+) requests in/.exec(text)?.[1]),
  }
}

async function main() {
  const rounds = Number(process.argv[2] ?? 6)
  const seconds = Number(process.argv[3] ?? 3)
  // A third argument keeps only the variants whose name matches it (the yardstick always runs).
  const only = new RegExp(process.argv[4] ?? '')
  const names = Object.keys(VARIANTS).filter((name, i) => i === 0 || only.test(name))
  const logs = mkdtempSync(join(tmpdir(), 'rl-hook-costs-'))
  const servers = await Promise.all(
    names.map(async (name) => {
      const child = Bun.spawn([process.execPath, import.meta.path, 'serve', name], {
        stdout: 'pipe',
        stderr: 'inherit',
      })
      const reader = child.stdout.getReader()
      const { value } = await reader.read()
      return { name, child, port: Number(new TextDecoder().decode(value).trim()) }
    }),
  )
  for (const server of servers) wrk(server.port, 1)
  const rates = new Map<string, number[]>(names.map((name) => [name, []]))
  const ratios = new Map<string, number[]>(names.map((name) => [name, []]))
  const cpu = new Map<string, number[]>(names.map((name) => [name, []]))
  for (let round = 0; round < rounds; round++) {
    const order = servers.map((_, i) => servers[(i + round) % servers.length] as (typeof servers)[number])
    const thisRound = new Map<string, number>()
    for (const server of order) {
      const before = cpuSeconds(server.child.pid)
      const { rate, requests } = wrk(server.port, seconds)
      cpu.get(server.name)?.push(((cpuSeconds(server.child.pid) - before) * 1e6) / requests)
      rates.get(server.name)?.push(rate)
      thisRound.set(server.name, rate)
    }
    const bare = thisRound.get('bare Bun.serve') as number
    for (const name of names) ratios.get(name)?.push((thisRound.get(name) as number) / bare)
    process.stderr.write(`round ${round + 1} of ${rounds} done\n`)
  }
  for (const server of servers) server.child.kill()
  rmSync(logs, { recursive: true, force: true })
  console.log(`| Server | req/s | × bare Bun.serve (per round) | CPU per request |`)
  console.log(`| --- | ---: | --- | ---: |`)
  for (const name of names) {
    const perRound = (ratios.get(name) ?? []).map((r) => r.toFixed(2)).join(', ')
    console.log(
      `| ${name} | ${Math.round(median(rates.get(name) ?? [])).toLocaleString('en')} | **${median(ratios.get(name) ?? []).toFixed(2)}×** (${perRound}) | ${median(cpu.get(name) ?? []).toFixed(2)} µs |`,
    )
  }
}

if (process.argv[2] === 'serve') {
  const name = process.argv[3] ?? ''
  const variant = VARIANTS[name]
  if (variant === undefined) throw new Error(`unknown variant ${name}`)
  console.log(serve(variant))
} else await main()
