/**
 * The server of bench/events.ts: `startServer` as the executable runs it (seeded catalogue, in memory, no log), but
 * with the event streams' bounds raised so that 1,000 subscribers on loopback (one client address) fit. Prints the
 * executable's ready line. `--data URL` runs it over PostgreSQL instead.
 */
import { startServer } from '../src/server.ts'

const args = process.argv.slice(2)
const option = (name: string) => {
  const at = args.indexOf(name)
  return at >= 0 ? args[at + 1] : undefined
}
const server = await startServer({
  port: Number(option('--port') ?? 0),
  data: option('--data') ?? ':memory:',
  seed: true,
  apiKeys: ['bench-key'],
  log: 'off',
  events: { perClient: 5000, total: 5000 },
})
console.log(`rock-legends listening on ${server.url}`)
for (const signal of ['SIGTERM', 'SIGINT'] as const)
  process.on(signal, () => {
    server.stop().then(() => process.exit(0))
  })
// The bench asks for a full collection and the memory figures (into the file it names), so that garbage does not count.
process.on('SIGUSR2', () => {
  Bun.gc(true)
  const file = process.env.BENCH_MEMORY_FILE
  if (file) Bun.write(file, JSON.stringify(process.memoryUsage()))
})
