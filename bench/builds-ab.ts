/**
 * `bun bench/builds-ab.ts BEFORE AFTER [ROUNDS]`: two executables built from different trees, over a JSON data file
 * each (durable writes, the default access log into a file), side by side: GET one artist, a list page and durable
 * creates, `wrk -t2 -c32 -d3s` each, the two taking turns in every round (order alternated), every round on fresh
 * data files. Prints, per request, the median req/s of each, the per-round ratios AFTER/BEFORE and their median, and
 * each server's CPU per request (/proc). For checking that a change keeps the JSON store's numbers.
 *
 * @example
 * git worktree add /tmp/base <commit> && (cd /tmp/base && bun install && bun run build)
 * bun run build && bun bench/builds-ab.ts /tmp/base/dist/rock-legends dist/rock-legends 5
 */
import { readFileSync } from 'node:fs'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

const [before, after, roundsText = '5'] = process.argv.slice(2)
if (!before || !after) throw new Error('usage: bun bench/builds-ab.ts BEFORE_EXECUTABLE AFTER_EXECUTABLE [ROUNDS]')
const rounds = Number(roundsText)
const builds = { before, after }
const CREATE = ['-s', join(import.meta.dir, 'wrk', 'post-artist.lua')]
const CASES = [
  { name: 'GET one artist', path: '/api/v1/artists/5', wrk: [] as string[] },
  { name: 'List page', path: '/api/v1/artists?limit=10&offset=0', wrk: [] as string[] },
  { name: 'Create an artist', path: '/api/v1/artists', wrk: CREATE },
]

/** User and system CPU time of a process so far, in seconds. */
function cpuSeconds(pid: number): number {
  const fields = (readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1] ?? '').split(' ')
  return (Number(fields[11]) + Number(fields[12])) / 100
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? Number.NaN
const dir = await mkdtemp(join(tmpdir(), 'rl-builds-ab-'))
const rates: Record<string, number[]> = {}
const cpu: Record<string, number[]> = {}
for (let round = 0; round < rounds; round++) {
  for (const build of round % 2 ? (['after', 'before'] as const) : (['before', 'after'] as const)) {
    const port = 4800 + round * 2 + (build === 'after' ? 1 : 0)
    const args = ['--data', join(dir, `${build}-${round}.json`), '--port', String(port), '--api-key', 'k', '--seed']
    const server = Bun.spawn([builds[build], ...args], {
      stdout: 'ignore',
      stderr: Bun.file(join(dir, `${build}-${round}.log`)),
    })
    for (let i = 0; i < 100; i++) {
      if (
        await fetch(`http://127.0.0.1:${port}/healthz`).then(
          (r) => r.ok,
          () => false,
        )
      )
        break
      await Bun.sleep(50)
    }
    Bun.spawnSync(['wrk', '-t2', '-c32', '-d1s', `http://127.0.0.1:${port}/api/v1/artists/5`])
    for (const c of CASES) {
      const start = cpuSeconds(server.pid)
      const body = c.wrk.length > 0 ? ['--', 'k', '{"name":"Bench Artist"}'] : []
      const out = Bun.spawnSync(['wrk', '-t2', '-c32', '-d3s', ...c.wrk, `http://127.0.0.1:${port}${c.path}`, ...body])
      const text = out.stdout.toString()
      const requests = Number(/(\d+) requests in/.exec(text)?.[1])
      const key = `${c.name} ${build}`
      rates[key] = [...(rates[key] ?? []), Number(/Requests\/sec:\s+([\d.]+)/.exec(text)?.[1])]
      cpu[key] = [...(cpu[key] ?? []), ((cpuSeconds(server.pid) - start) * 1e6) / requests]
    }
    server.kill()
    await server.exited
  }
}
await rm(dir, { recursive: true, force: true })
for (const c of CASES) {
  const b = rates[`${c.name} before`] ?? []
  const a = rates[`${c.name} after`] ?? []
  const ratios = a.map((rate, i) => rate / (b[i] ?? Number.NaN))
  console.log(
    `${c.name}: before ${Math.round(median(b))} req/s, after ${Math.round(median(a))} req/s;`,
    `after/before per round ${ratios.map((r) => r.toFixed(2)).join(', ')}, median ${median(ratios).toFixed(2)};`,
    `CPU per request ${median(cpu[`${c.name} before`] ?? []).toFixed(1)} → ${median(cpu[`${c.name} after`] ?? []).toFixed(1)} µs`,
  )
}
