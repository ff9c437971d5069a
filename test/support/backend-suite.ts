/**
 * `bun run test:sql`: the in-process contract suite once more, over the SQL store (see backends.ts): the same test
 * files, each `testApp()` over a fresh database of the harness's own PostgreSQL. `bun run test` runs it after the
 * main run. Without PostgreSQL on the machine it says so and skips, except under `CI=true`, where it fails.
 */
import { postgresAvailable } from './postgres.ts'

/** The test folders whose apps run over the backend under test: the API's contract, through `testApp()`. */
export const CONTRACT_SUITE = ['test/catalogue', 'test/accounts', 'test/contract', 'test/http', 'test/covers']

const why = postgresAvailable()
if (why) {
  if (process.env.CI === 'true') {
    console.error(`the contract suite must run over PostgreSQL in CI, but ${why}`)
    process.exit(1)
  }
  console.warn(`skipping the contract suite over PostgreSQL: ${why}`)
  process.exit(0)
}
const run = Bun.spawn(['bun', 'test', ...CONTRACT_SUITE, ...process.argv.slice(2)], {
  env: { ...process.env, ROCK_LEGENDS_TEST_BACKEND: 'postgres' },
  stdio: ['inherit', 'inherit', 'inherit'],
})
process.exit(await run.exited)
