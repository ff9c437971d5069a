import { expect, test } from 'bun:test'
// @ts-expect-error: plain JavaScript, typed only through the package's index.d.ts
import { argumentsFor } from '../../npm/rock-legends/lib/server.js'

// The Node startServer turns each option into the flag the executable reads (see npm/rock-legends/lib/server.js).
test.each([
  [{}, []],
  [{ seed: true }, ['--seed']],
  [{ readOnly: true, allowReset: true }, ['--read-only', '--allow-reset']],
  [{ ui: false }, ['--no-ui']],
  [{ ui: true }, []],
  [{ signup: false }, ['--no-signup']],
])('the options %o add %p to the command line', (options, flags) => {
  const base = ['--port', '0', '--data', ':memory:', '--log', 'off']
  expect(argumentsFor(options, [])).toEqual([...base, ...flags])
})
