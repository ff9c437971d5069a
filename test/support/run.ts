/**
 * `bun run test`: every test file (test/release/ aside: that is the release step's, `bun run test:release`), then the
 * in-process contract suite again over PostgreSQL, as two `bun test` runs that each print their own results.
 *
 * What the runs share is made once, here: the compiled executable (built when older than its sources; every test
 * process of the run then uses that build, see `BUILT_FOR_RUN`) and one PostgreSQL server (every test process takes a
 * database of its own on it, see `SHARED_POSTGRES`), the build while the server starts. The test files are spread
 * over worker processes (`bun test --parallel`), each keeping its modules from one file to the next (`--no-isolate`),
 * as a single `bun test` process does. The contract suite over PostgreSQL runs meanwhile; its output is held back and
 * printed after the main run's, so that neither interleaves with the other.
 *
 * Arguments go to the main run: `bun run test test/catalogue` runs that folder, and the contract suite in full.
 */
import { closeSync, openSync, readFileSync } from 'node:fs'
import { availableParallelism } from 'node:os'
import { join } from 'node:path'
import { CONTRACT_SUITE, overPostgres, TIMEOUT, withoutPostgres } from './backend-suite.ts'
import { BINARY, BUILT_FOR_RUN, ensureBinary, removeDir, tempDir } from './binary.ts'
import { SHARED_POSTGRES, startSharedPostgres } from './postgres.ts'

/**
 * Worker processes of the main run: one per core and one more. Its files spend part of their time waiting (for
 * start-ups, for Chromium, for a server to close an idle connection), which a core per worker leaves idle: the extra
 * worker keeps the cores busy while files wait, and a second extra one gains nothing (docs/development.md has the
 * figures). The contract suite over PostgreSQL, beside it, takes two more.
 */
const WORKERS = Number(process.env.ROCK_LEGENDS_TEST_WORKERS ?? availableParallelism() + 1)
const SQL_WORKERS = Number(process.env.ROCK_LEGENDS_TEST_SQL_WORKERS ?? 2)

// The build (a second or so) runs while PostgreSQL starts.
const build = ensureBinary()
const skipSql = withoutPostgres()
const postgres = skipSql === undefined ? await startSharedPostgres() : undefined
await build
const env: Record<string, string | undefined> = { ...process.env, [BUILT_FOR_RUN]: BINARY }
if (postgres) env[SHARED_POSTGRES] = postgres.env

/**
 * Spread over `workers` processes; test/timings.json (each file's duration in a run of the whole suite, refreshed now
 * and then with `bun test --timings=test/timings.json --update-timings`) lets each worker start with its slowest
 * files, so that no long file is left to run alone at the end.
 */
const parallel = (workers: number) =>
  workers > 1 ? [`--parallel=${workers}`, '--no-isolate', `--timings=${join(import.meta.dir, '../timings.json')}`] : []

// The contract suite over PostgreSQL, its output (stdout and stderr, in order) into a file until the main run is done.
const held = tempDir('rock-legends-test-run-')
const heldOutput = join(held, 'sql.log')
const sqlRun = postgres
  ? (() => {
      const fd = openSync(heldOutput, 'w')
      const child = Bun.spawn(['bun', 'test', TIMEOUT, ...parallel(SQL_WORKERS), ...CONTRACT_SUITE], {
        env: overPostgres(env),
        stdio: ['ignore', fd, fd],
      })
      closeSync(fd)
      return child
    })()
  : undefined

const main = Bun.spawn(['bun', 'test', TIMEOUT, ...parallel(WORKERS), ...process.argv.slice(2)], {
  env,
  stdio: ['inherit', 'inherit', 'inherit'],
})
const mainCode = await main.exited
let sqlCode = skipSql ?? 0
if (sqlRun) {
  sqlCode = await sqlRun.exited
  process.stderr.write(`\n$ bun run test:sql (the contract suite over PostgreSQL, run beside the above)\n`)
  process.stderr.write(readFileSync(heldOutput))
}
removeDir(held)
postgres?.stop()
process.exit(mainCode || sqlCode)
