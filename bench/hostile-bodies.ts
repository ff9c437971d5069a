/**
 * `bun bench/hostile-bodies.ts [--ref REF | --baseline BINARY] [--seconds N] [--rounds N] [--write]`: what a write
 * costs the server before it is refused, in CPU time per request, for anonymous bodies just under the 1 MiB limit
 * (many keys; many short strings), to a protected route and to sign-up and login (public, limited to 16 KiB), beside
 * a small anonymous write and small authenticated ones. Runs two compiled
 * servers side by side: `dist/rock-legends` (built first when older than its sources) and a baseline built from `REF`
 * (HEAD by default: the committed code, before the changes in the working tree) with `git archive`, or `BINARY`.
 * `--write` records the section in bench/RESULTS.md.
 */
import { rmSync } from 'node:fs'
import { loadavg } from 'node:os'
import { ensureBinary } from '../test/support/binary.ts'
import { describeMachine } from './machine.ts'
import { count, median, ratio, table, utc } from './markdown.ts'
import { writeNamedSection } from './results-file.ts'
import { type ServerProcess, startRockLegends } from './server-process.ts'
import { baselineBinary } from './two-builds.ts'

const KEY = 'bench-key'
const MAX_BODY_BYTES = 1024 * 1024

const args = process.argv.slice(2)
const option = (name: string) => {
  const at = args.indexOf(name)
  return at >= 0 ? args[at + 1] : undefined
}
const SECONDS = Number(option('--seconds') ?? 3)
const ROUNDS = Number(option('--rounds') ?? 3)
const CONNECTIONS = 2
const REF = option('--ref') ?? 'HEAD'

/** A body of `{"name":"x","k0":0,"k1":0,…}` just under 1 MiB: about 90,000 keys. */
function manyKeys(): string {
  const parts = ['{"name":"x"']
  let size = parts[0]?.length ?? 0
  for (let i = 0; size < MAX_BODY_BYTES - 32; i++) {
    const part = `,"k${i}":0`
    parts.push(part)
    size += part.length
  }
  return `${parts.join('')}}`
}

/** A body of `{"name":"x","tags":["a","a",…]}` just under 1 MiB: about 260,000 short strings. */
const manyStrings = () => `{"name":"x","tags":[${Array(Math.floor((MAX_BODY_BYTES - 64) / 4)).fill('"a"')}]}`

interface Case {
  label: string
  path: string
  headers: Record<string, string>
  body: string
  /** The status both builds answer with, or each build's where they differ. */
  status: number | { before: number; after: number }
}

const json = { 'content-type': 'application/json' }
const withKey = { ...json, 'x-api-key': KEY }
const ARTISTS = '/api/v1/artists'
const LOGIN = '/api/v1/user/login'
const SIGNUP = '/api/v1/user/signup'
// Sign-up and login read at most 16 KiB of a body (413); a baseline from before that limit parsed up to 1 MiB and
// refused it (400).
const CUT_SHORT = { before: 400, after: 413 }
const CASES: Case[] = [
  { label: 'Small anonymous write (the yardstick)', path: ARTISTS, headers: json, body: '{"name":"A"}', status: 401 },
  { label: 'Anonymous write, ~1 MiB of keys', path: ARTISTS, headers: json, body: manyKeys(), status: 401 },
  { label: 'Anonymous write, ~1 MiB of short strings', path: ARTISTS, headers: json, body: manyStrings(), status: 401 },
  { label: 'Small authenticated create', path: ARTISTS, headers: withKey, body: '{"name":"A"}', status: 201 },
  {
    label: 'Authenticated write, ~1 MiB of short strings',
    path: ARTISTS,
    headers: withKey,
    body: manyStrings(),
    status: 400,
  },
  { label: 'Login (public), ~1 MiB of keys', path: LOGIN, headers: json, body: manyKeys(), status: CUT_SHORT },
  {
    label: 'Login (public), ~1 MiB of short strings',
    path: LOGIN,
    headers: json,
    body: manyStrings(),
    status: CUT_SHORT,
  },
  { label: 'Sign-up (public), ~1 MiB of keys', path: SIGNUP, headers: json, body: manyKeys(), status: CUT_SHORT },
  {
    label: 'Sign-up (public), ~1 MiB of short strings',
    path: SIGNUP,
    headers: json,
    body: manyStrings(),
    status: CUT_SHORT,
  },
]

/** One run: `CONNECTIONS` clients send `c` back to back for `SECONDS`; the server's CPU time per answered request. */
async function measure(
  server: ServerProcess,
  c: Case,
  build: 'before' | 'after',
): Promise<{ cpuMs: number; requests: number }> {
  const url = `${server.url}${c.path}`
  const expected = statusOf(c, build)
  const send = async () => {
    const response = await fetch(url, { method: 'POST', headers: c.headers, body: c.body })
    await response.arrayBuffer()
    if (response.status !== expected) throw new Error(`${c.label} (${build}): ${response.status}, not ${expected}`)
  }
  for (let i = 0; i < 5; i++) await send()
  const cpuBefore = await server.cpuSeconds()
  const until = performance.now() + SECONDS * 1000
  let requests = 0
  await Promise.all(
    Array.from({ length: CONNECTIONS }, async () => {
      while (performance.now() < until) {
        await send()
        requests++
      }
    }),
  )
  const cpu = (await server.cpuSeconds()) - cpuBefore
  return { cpuMs: (cpu * 1000) / requests, requests }
}

const statusOf = (c: Case, build: 'before' | 'after') => (typeof c.status === 'number' ? c.status : c.status[build])
const statusText = (c: Case) =>
  typeof c.status === 'number' ? String(c.status) : `${c.status.before} → ${c.status.after}`

const perRequest = (ms: number) => (ms < 1 ? `${(ms * 1000).toFixed(0)} µs` : `${ms.toFixed(1)} ms`)

async function main() {
  const given = option('--baseline')
  const baseline = given ? { binary: given, commit: 'given', dir: undefined } : await baselineBinary(REF)
  const current = await ensureBinary()
  const start = (binary: string) => startRockLegends(['--data', ':memory:', '--api-key', KEY], undefined, binary)
  const servers = { before: await start(baseline.binary), after: await start(current) }
  const cpu: Record<'before' | 'after', number[][]> = { before: CASES.map(() => []), after: CASES.map(() => []) }
  let requests = 0
  const loadBefore = loadavg()[0] as number
  try {
    for (let round = 0; round < ROUNDS; round++)
      // The two builds take turns, first one then the other, so that drift in the machine's load falls on both.
      for (const [i, c] of CASES.entries())
        for (const build of round % 2 === 0 ? (['before', 'after'] as const) : (['after', 'before'] as const)) {
          const result = await measure(servers[build], c, build)
          cpu[build][i]?.push(result.cpuMs)
          requests += result.requests
          process.stderr.write(`round ${round + 1}, ${c.label}, ${build}: ${perRequest(result.cpuMs)}\n`)
        }
  } finally {
    await Promise.all([servers.before.stop(), servers.after.stop()])
    if (baseline.dir) rmSync(baseline.dir, { recursive: true, force: true })
  }
  const loadAfter = loadavg()[0] as number
  const before = cpu.before.map(median)
  const after = cpu.after.map(median)
  const rows = CASES.map((c, i) => {
    const [b, a] = [before[i] as number, after[i] as number]
    return [
      c.label,
      statusText(c),
      perRequest(b),
      perRequest(a),
      ratio(a / b),
      ratio(b / (before[0] as number)),
      ratio(a / (after[0] as number)),
    ]
  })
  const machine = await describeMachine('')
  const command = `bun bench/hostile-bodies.ts${given ? ` --baseline ${given}` : REF === 'HEAD' ? '' : ` --ref ${REF}`} --seconds ${SECONDS} --rounds ${ROUNDS}`
  const section = [
    '## Hostile bodies: what a refused write costs the server',
    '',
    `Measured ${utc(new Date())} with \`${command}\` on ${machine.cpu}, ${machine.cores} cores, ${machine.memory}, ${machine.kernel}, Bun ${machine.bun}. Two compiled servers side by side, \`--data :memory: --log off\`: **before** is commit ${baseline.commit}, **after** is this working tree (where sign-up and login read at most 16 KiB of a body: a larger one is answered 413 by its Content-Length before it is read, or once 16 KiB of it have come). ${CONNECTIONS} clients send each \`POST\` back to back for ${SECONDS} s per case and build, ${ROUNDS} rounds, the builds taking turns; ${count(requests)} requests in all. **CPU per request** is the server's user and system time (from /proc/PID/stat) over the requests answered, the median over the rounds. The bodies: about 90,000 keys (\`{"name":"x","k0":0,…}\`), or about 260,000 strings (\`{"name":"x","tags":["a",…]}\`), each just under 1 MiB. One-minute load average ${loadBefore.toFixed(2)} before and ${loadAfter.toFixed(2)} after (the clients share the machine).`,
    '',
    table(
      [
        ['Request', 'left'],
        ['Status', 'right'],
        ['CPU before', 'right'],
        ['CPU after', 'right'],
        ['After / before', 'right'],
        ['Before, × small anonymous', 'right'],
        ['After, × small anonymous', 'right'],
      ],
      rows,
    ),
    '',
    "An anonymous write costs about the same whatever its body: the 401 goes out before the body is read, and what is left is receiving the bytes. Sign-up and login, which anyone may call, now cost the same way: their 413 goes out before more than 16 KiB is read, where they used to parse up to 1 MiB and refuse it with a 400 that held the whole body (Elysia writes it into its validation error's message). A body that is parsed (a write with a valid credential) still costs JSON.parse of up to 1 MiB.",
  ].join('\n')
  process.stdout.write(`${section}\n`)
  if (args.includes('--write')) await writeNamedSection('hostile-bodies', section)
}

await main()
