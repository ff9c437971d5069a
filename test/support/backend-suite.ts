/**
 * `bun run test:sql`: the in-process contract suite once more, over the SQL store (see backends.ts): the same test
 * files, each `testApp()` over a fresh database of the harness's own PostgreSQL. `bun run test` (test/support/run.ts)
 * runs it beside the main run. Without PostgreSQL on the machine it says so and skips, except under `CI=true`, where
 * it fails. With `ROCK_LEGENDS_TEST_POOLER=session` or `transaction`, through PgBouncer in that mode (backends.ts);
 * `.ci/run` runs it so in both, and needs Debian's `pgbouncer` for that.
 */
import bunfig from '../../bunfig.toml'
import { pgbouncerAvailable } from './pgbouncer.ts'
import { postgresAvailable } from './postgres.ts'

/**
 * The test files whose apps run over the backend under test (the API's contract, through `testApp()`), as `bun test`
 * arguments: the in-process files of these folders. A file named for another harness (`.binary`, `.browser`, `.sql`
 * or `.node` before `.test.ts`) starts the executable, a browser or a database of its own, whatever the backend: it
 * runs in the main run only. Patterns on the command line take the place of bunfig.toml's `pathIgnorePatterns`, so
 * those are passed again: the folders are filters that match anywhere in a path
 * (`npm/recipes/node-test/catalogue.test.mjs` holds `test/catalogue`).
 */
export const CONTRACT_SUITE = [
  'test/catalogue',
  'test/accounts',
  'test/contract',
  'test/http',
  'test/covers',
  ...[...bunfig.test.pathIgnorePatterns, '**/*.{binary,browser,sql,node}.test.ts'].map(
    (pattern) => `--path-ignore-patterns=${pattern}`,
  ),
]

/**
 * The per-test timeout of the runs: room for subprocess tests on a small, busy machine (bunfig.toml cannot set it:
 * Bun 1.4.5 ignores a `timeout` there).
 */
export const TIMEOUT = '--timeout=30000'

/** The environment of the contract suite's run over PostgreSQL: `env` with the backend set. */
export const overPostgres = (env: Record<string, string | undefined>) => ({
  ...env,
  ROCK_LEGENDS_TEST_BACKEND: 'postgres',
})

/**
 * Whether the contract suite can run over PostgreSQL here: says why not, and returns the exit code to end with
 * then (1 under `CI=true`, where it must run; 0 elsewhere); undefined when it can.
 */
export function withoutPostgres(): number | undefined {
  const why = postgresAvailable() ?? (process.env.ROCK_LEGENDS_TEST_POOLER ? pgbouncerAvailable() : undefined)
  if (!why) return undefined
  if (process.env.CI === 'true') {
    console.error(`the contract suite must run over PostgreSQL in CI, but ${why}`)
    return 1
  }
  console.warn(`skipping the contract suite over PostgreSQL: ${why}`)
  return 0
}

if (import.meta.main) {
  const skip = withoutPostgres()
  if (skip !== undefined) process.exit(skip)
  const run = Bun.spawn(['bun', 'test', TIMEOUT, ...CONTRACT_SUITE, ...process.argv.slice(2)], {
    env: overPostgres(process.env),
    stdio: ['inherit', 'inherit', 'inherit'],
  })
  process.exit(await run.exited)
}
