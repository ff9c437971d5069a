/**
 * `bun bench/shutdown.ts [--rounds R]`: how long `dist/rock-legends` takes to exit after SIGTERM, idle and after
 * serving, over a JSON data file, over memory and over PostgreSQL (one of its own, test/support/postgres.ts). Each
 * round starts the executable, waits for its ready line, then either does nothing for a second (idle) or sends 200
 * reads and writes and leaves a keep-alive connection and an event stream open (after serving), sends SIGTERM and
 * times until the process has exited. Prints per store the median and the longest of the rounds, with the machine.
 */
import { connect } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { removeDir, startBinary, tempDir } from '../test/support/binary.ts'
import { postgresAvailable } from '../test/support/postgres.ts'
import { describeMachine } from './machine.ts'
import { startBenchPostgres } from './sql-bench.ts'

const { values } = parseArgs({ args: process.argv.slice(2), options: { rounds: { type: 'string', default: '10' } } })
const rounds = Number(values.rounds)
const KEY = 'bench-shutdown-key-0123456789'
const progress = (line: string) => process.stderr.write(`shutdown: ${line}\n`)

/** Milliseconds from SIGTERM to exit of one server over `data`, idle or after serving. */
async function once(data: string, busy: boolean): Promise<number> {
  const server = await startBinary([
    '--port',
    '0',
    '--data',
    data,
    '--api-key',
    KEY,
    '--log',
    'off',
    '--allow-new-data',
  ])
  const open: ReturnType<typeof connect>[] = []
  if (busy) {
    for (let i = 0; i < 100; i++) {
      await (await fetch(`${server.url}/api/v1/artists?limit=5`)).text()
      await (
        await fetch(`${server.url}/api/v1/artists`, {
          method: 'POST',
          headers: { 'x-api-key': KEY, 'content-type': 'application/json' },
          body: JSON.stringify({ name: `Shutdown ${i}` }),
        })
      ).text()
    }
    const { port } = new URL(server.url)
    for (const target of ['/api/v1/artists', '/api/v1/events']) {
      const socket = connect(Number(port), '127.0.0.1')
      socket.on('error', () => {})
      socket.on('data', () => {})
      await new Promise((resolve) => socket.on('connect', resolve))
      socket.write(`GET ${target} HTTP/1.1\r\nHost: x\r\nAccept: text/event-stream, application/json\r\n\r\n`)
      open.push(socket)
    }
  }
  await Bun.sleep(busy ? 200 : 1000)
  const started = performance.now()
  const code = await server.stop('SIGTERM')
  const ms = performance.now() - started
  for (const socket of open) socket.destroy()
  if (code !== 0) throw new Error(`exit ${code}: ${await server.stderr()}`)
  return ms
}

const dir = tempDir('rock-legends-shutdown-')
const stores: [string, (round: number) => string][] = [
  ['JSON data file', (round) => join(dir, `db-${round}.json`)],
  [':memory:', () => ':memory:'],
]
let postgres: Awaited<ReturnType<typeof startBenchPostgres>> | undefined
if (postgresAvailable() === undefined) {
  postgres = await startBenchPostgres(join(tmpdir(), `rock-legends-shutdown-pg-${process.pid}`))
  await postgres.createDatabase('shutdown')
  const url = postgres.url('shutdown')
  stores.push([`PostgreSQL ${postgres.version}`, () => url])
} else progress(`no PostgreSQL: ${postgresAvailable()}`)

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] as number
const lines: string[] = []
try {
  for (const [name, data] of stores)
    for (const busy of [false, true]) {
      const times: number[] = []
      for (let round = 0; round < rounds; round++) {
        progress(`${name}, ${busy ? 'after serving' : 'idle'}, round ${round + 1}`)
        times.push(await once(data(round), busy))
      }
      lines.push(
        `| ${name} | ${busy ? 'after serving, a keep-alive connection and an event stream open' : 'idle'} | ${median(times).toFixed(1)} ms | ${Math.max(...times).toFixed(1)} ms |`,
      )
    }
} finally {
  await postgres?.stop()
  removeDir(dir)
}
const machine = await describeMachine('none')
console.log(`Machine: ${machine.cpu}, ${machine.cores} cores, ${machine.memory}, ${machine.kernel}, Bun ${machine.bun}`)
console.log(`${rounds} rounds each; from SIGTERM to the process's exit.\n`)
console.log('| Store | Before SIGTERM | Median | Longest |')
console.log('|---|---|---|---|')
for (const line of lines) console.log(line)
