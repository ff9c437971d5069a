/**
 * `bun bench/log-line-costs.ts 2>/dev/null`: what the access log's own pieces cost in process, a million times each:
 * formatting a pretty line, queueing an entry with the batched writes of src/log.ts (which make the lines at the
 * flush, here every 5,000 entries; stderr goes where the shell sends it), and `Bun.randomUUIDv7`. Prints nanoseconds
 * per call. In a loop, everything is in the caches: a server pays several times more per request (bench/RESULTS.md).
 */
import { requestTarget } from '../src/http/request-target.ts'
import { createLogger, flushLog, prettyAccess } from '../src/log.ts'

const access = createLogger('pretty').access
if (!access) throw new Error('the pretty logger has an access log')
const N = 1_000_000
const url = 'http://127.0.0.1:4444/api/v1/artists/500'
const entry = () => ({
  method: 'GET',
  path: requestTarget(url),
  status: 200,
  durationMs: 0.123,
  requestId: '0193a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b',
})
const time = (label: string, run: (i: number) => unknown) => {
  const started = performance.now()
  for (let i = 0; i < N; i++) run(i)
  console.log(`${label}: ${(((performance.now() - started) * 1e6) / N).toFixed(0)} ns`)
}
time('prettyAccess', () => prettyAccess(entry()))
time('access, with the batched writes (the line made at the flush)', (i) => {
  access(entry())
  if (i % 5000 === 0) flushLog()
})
flushLog()
time('Bun.randomUUIDv7', () => Bun.randomUUIDv7())
