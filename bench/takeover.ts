/**
 * `bun bench/takeover.ts [--rounds R] [--clients C]`: failed requests while the executable is replaced under load,
 * with `--takeover` and, for comparison, with a plain restart (SIGTERM, then a new start, as `systemctl restart`
 * does). C clients (16 by default) read and create without a pause for a second, through the swap and for a second
 * after it, in three ways: straight to the server on keep-alive connections, straight to it on a new connection per
 * request, and through nginx configured as docs/operations.md says (TLS, `proxy_pass`). Prints per way and kind of
 * swap the requests, the failures (and the first of them), the artists created and how many of those the new process
 * lacks, how long the swap took and the slowest request (the held ones wait for the old process to let go), with the
 * machine and whether `net.ipv4.tcp_migrate_req` is on.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { freePort, type RunningBinary, startBinary } from '../test/support/binary.ts'
import { loadDuringSwap, nginxInFront } from '../test/support/swap.ts'
import { describeMachine } from './machine.ts'
import { wrkVersion } from './wrk.ts'

const { values } = parseArgs({
  args: process.argv.slice(2),
  options: { rounds: { type: 'string', default: '3' }, clients: { type: 'string', default: '16' } },
})
const rounds = Number(values.rounds)
const clients = Number(values.clients)
const KEY = 'bench-takeover-key-0123456789abcdef'
const progress = (line: string) => process.stderr.write(`takeover: ${line}\n`)

type Way = 'keep-alive' | 'new connections' | 'through nginx'
type Swap = 'takeover' | 'restart'

interface Outcome {
  requests: number
  failures: number
  first?: string
  created: number
  lost: number
  swapMs: number
  slowestMs: number
}

async function once(way: Way, swap: Swap): Promise<Outcome> {
  const dir = mkdtempSync(join(tmpdir(), 'rock-legends-takeover-'))
  const port = freePort()
  const args = ['--port', String(port), '--data', join(dir, 'db.json'), '--api-key', KEY, '--log', 'off', '--seed']
  const old = await startBinary(args)
  const nginx = way === 'through nginx' ? await nginxInFront(dir, port) : undefined
  let next: RunningBinary | undefined
  try {
    const load = await loadDuringSwap({
      base: nginx?.url ?? `http://127.0.0.1:${port}`,
      key: KEY,
      clients,
      keepAlive: way !== 'new connections',
      insecure: nginx !== undefined,
      beforeMs: 1000,
      afterMs: 1000,
      swap: async () => {
        if (swap === 'restart') await old.stop()
        const again = args.filter((arg) => arg !== '--seed')
        next = await startBinary(swap === 'takeover' ? [...again, '--takeover'] : again)
        await old.process.exited
      },
    })
    let lost = 0
    for (const id of load.created)
      if ((await fetch(`http://127.0.0.1:${port}/api/v1/artists/${id}`)).status !== 200) lost++
    return {
      requests: load.reads + load.writes,
      failures: load.failures.length,
      first: load.failures[0],
      created: load.created.length,
      lost,
      swapMs: load.swapMs,
      slowestMs: load.slowestMs,
    }
  } finally {
    await next?.stop()
    old.process.kill()
    nginx?.stop()
    rmSync(dir, { recursive: true, force: true })
  }
}

const migrate = (() => {
  try {
    return readFileSync('/proc/sys/net/ipv4/tcp_migrate_req', 'utf8').trim()
  } catch {
    return 'unknown'
  }
})()
const machine = await describeMachine((await wrkVersion()) ?? 'none')
const lines: string[] = []
for (const way of ['keep-alive', 'new connections', 'through nginx'] as Way[])
  for (const swap of ['takeover', 'restart'] as Swap[])
    for (let round = 1; round <= rounds; round++) {
      progress(`${way}, ${swap}, round ${round}`)
      const outcome = await once(way, swap)
      lines.push(
        `| ${way} | ${swap} | ${round} | ${outcome.requests} | ${outcome.failures} | ${outcome.created} | ${outcome.lost} | ${Math.round(outcome.swapMs)} ms | ${Math.round(outcome.slowestMs)} ms | ${outcome.first?.replace(/[\s|]+/g, ' ').slice(0, 80) ?? ''} |`,
      )
    }
console.log(
  `Machine: ${machine.cpu}, ${machine.cores} cores, ${machine.memory}, ${machine.kernel}, Bun ${machine.bun}; ` +
    `${clients} clients; net.ipv4.tcp_migrate_req = ${migrate}\n`,
)
console.log('| Way | Swap | Round | Requests | Failed | Created | Lost | Swap took | Slowest request | First failure |')
console.log('|---|---|---|---|---|---|---|---|---|---|')
for (const line of lines) console.log(line)
