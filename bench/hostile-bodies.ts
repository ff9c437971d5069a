/**
 * `bun bench/hostile-bodies.ts [--ref REF | --baseline BINARY] [--seconds N] [--rounds N] [--write]`: what a write
 * costs the server before it is refused, in CPU time per request, for anonymous bodies just under the 1 MiB limit
 * (many keys; many short strings) beside a small anonymous write and small authenticated ones. Runs two compiled
 * servers side by side: `dist/rock-legends` (built first when older than its sources) and a baseline built from `REF`
 * (HEAD by default: the committed code, before the changes in the working tree) with `git archive`, or `BINARY`.
 * `--write` records the section in bench/RESULTS.md.
 */
import { mkdtempSync, readdirSync, rmSync, statSync, symlinkSync } from 'node:fs'
import { loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import { describeMachine } from './machine.ts'
import { count, median, ratio, table, utc } from './markdown.ts'
import { writeNamedSection } from './results-file.ts'

const ROOT = join(import.meta.dir, '..')
const KEY = 'bench-key'
const MAX_BODY_BYTES = 1024 * 1024
// The unit of the times in /proc/PID/stat: USER_HZ, which Linux fixes at 100 for user space.
const USER_HZ = 100

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
  /** The status both builds answer with. */
  status: number
}

const json = { 'content-type': 'application/json' }
const withKey = { ...json, 'x-api-key': KEY }
const ARTISTS = '/api/v1/artists'
const LOGIN = '/api/v1/user/login'
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
  { label: 'Login (public), ~1 MiB of keys', path: LOGIN, headers: json, body: manyKeys(), status: 400 },
]

/** The newest modification time under `path`. */
function newest(path: string): number {
  const stat = statSync(path)
  if (!stat.isDirectory()) return stat.mtimeMs
  return Math.max(0, ...readdirSync(path).map((name) => newest(join(path, name))))
}

async function run(command: string[], cwd: string): Promise<string> {
  const child = Bun.spawn(command, { cwd, stdout: 'pipe', stderr: 'pipe' })
  const [out, err, code] = await Promise.all([
    new Response(child.stdout).text(),
    new Response(child.stderr).text(),
    child.exited,
  ])
  if (code !== 0) throw new Error(`${command.join(' ')} failed (${code}): ${err}`)
  return out.trim()
}

/** dist/rock-legends, built first when older than its sources. */
async function currentBinary(): Promise<string> {
  const binary = join(ROOT, 'dist', 'rock-legends')
  const built = statSync(binary, { throwIfNoEntry: false })?.mtimeMs ?? 0
  if (built < Math.max(newest(join(ROOT, 'src')), newest(join(ROOT, 'package.json'))))
    await run(['bun', 'run', 'build'], ROOT)
  return binary
}

/** The executable of the committed `ref`, built in a temporary directory; returns it with the commit it was built from. */
async function baselineBinary(ref: string): Promise<{ binary: string; commit: string; dir: string }> {
  const commit = await run(['git', 'rev-parse', '--short', ref], ROOT)
  const dir = mkdtempSync(join(tmpdir(), 'rock-legends-baseline-'))
  await run(['sh', '-c', `git archive ${commit} | tar -x -C ${dir}`], ROOT)
  symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'))
  await run(['bun', 'run', 'build'], dir)
  return { binary: join(dir, 'dist', 'rock-legends'), commit, dir }
}

/** A compiled server on a free port, with its CPU time from /proc. */
interface Server {
  url: string
  cpuSeconds(): Promise<number>
  stop(): Promise<void>
}

async function start(binary: string): Promise<Server> {
  const child = Bun.spawn([binary, '--port', '0', '--data', ':memory:', '--api-key', KEY, '--log', 'off'], {
    stdin: 'ignore',
    stdout: 'pipe',
    stderr: 'inherit',
  })
  const reader = child.stdout.getReader()
  let text = ''
  let match: RegExpExecArray | null = null
  while (!match) {
    const { value, done } = await reader.read()
    if (done) throw new Error(`${binary} exited before it was ready: ${text}`)
    text += new TextDecoder().decode(value)
    match = /^rock-legends listening on (\S+)$/m.exec(text)
  }
  reader.releaseLock()
  return {
    url: match[1] as string,
    cpuSeconds: async () => {
      const stat = await Bun.file(`/proc/${child.pid}/stat`).text()
      // Fields after the command name, which is in parentheses and may hold spaces: utime and stime are 12th and 13th.
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
      return (Number(fields[11]) + Number(fields[12])) / USER_HZ
    },
    stop: async () => {
      child.kill('SIGTERM')
      await child.exited
    },
  }
}

/** One run: `CONNECTIONS` clients send `c` back to back for `SECONDS`; the server's CPU time per answered request. */
async function measure(server: Server, c: Case): Promise<{ cpuMs: number; requests: number }> {
  const url = `${server.url}${c.path}`
  const send = async () => {
    const response = await fetch(url, { method: 'POST', headers: c.headers, body: c.body })
    await response.arrayBuffer()
    if (response.status !== c.status) throw new Error(`${c.label}: ${response.status}, not ${c.status}`)
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

const perRequest = (ms: number) => (ms < 1 ? `${(ms * 1000).toFixed(0)} µs` : `${ms.toFixed(1)} ms`)

async function main() {
  const given = option('--baseline')
  const baseline = given ? { binary: given, commit: 'given', dir: undefined } : await baselineBinary(REF)
  const current = await currentBinary()
  const servers = { before: await start(baseline.binary), after: await start(current) }
  const cpu: Record<'before' | 'after', number[][]> = { before: CASES.map(() => []), after: CASES.map(() => []) }
  let requests = 0
  const loadBefore = loadavg()[0] as number
  try {
    for (let round = 0; round < ROUNDS; round++)
      // The two builds take turns, first one then the other, so that drift in the machine's load falls on both.
      for (const [i, c] of CASES.entries())
        for (const build of round % 2 === 0 ? (['before', 'after'] as const) : (['after', 'before'] as const)) {
          const result = await measure(servers[build], c)
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
      String(c.status),
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
    `Measured ${utc(new Date())} with \`${command}\` on ${machine.cpu}, ${machine.cores} cores, ${machine.memory}, ${machine.kernel}, Bun ${machine.bun}. Two compiled servers side by side, \`--data :memory: --log off\`: **before** is commit ${baseline.commit} (the JSON body parsed, and scanned for \`__proto__\` keys with a key array and a pointer per key, before credentials were checked), **after** is this working tree (credentials checked in the parse hook before the body is read; the scan one pass with no allocation). ${CONNECTIONS} clients send each \`POST\` back to back for ${SECONDS} s per case and build, ${ROUNDS} rounds, the builds taking turns; ${count(requests)} requests in all. **CPU per request** is the server's user and system time (from /proc/PID/stat) over the requests answered, the median over the rounds. The bodies: about 90,000 keys (\`{"name":"x","k0":0,…}\`), or about 260,000 strings (\`{"name":"x","tags":["a",…]}\`), each just under 1 MiB. One-minute load average ${loadBefore.toFixed(2)} before and ${loadAfter.toFixed(2)} after (the clients share the machine).`,
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
    "An anonymous write now costs about the same whatever its body: the 401 goes out before the body is read, and what is left is receiving the bytes. A body that is parsed (a write with a valid credential, or sign-up and login, which need none) still costs JSON.parse of up to 1 MiB and the 400 that refuses it (Elysia writes the whole body into its validation error's message), but no longer a scan that allocated a pointer string for every key and array item.",
  ].join('\n')
  process.stdout.write(`${section}\n`)
  if (args.includes('--write')) await writeNamedSection('hostile-bodies', section)
}

await main()
