import { afterAll, describe, expect, test } from 'bun:test'
import { existsSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { ensureBinary, removeDir, tempDir } from '../support/binary.ts'
import { blocks, run } from '../support/proxies.ts'

// The systemd units of docs/operations.md, as `systemd-analyze verify` reads them: a key systemd does not know, a
// value it cannot parse or a program that is not there is a warning there, and a failure here. Debian's `systemd`
// package has it; without it these tests skip, except under CI=true.

const ANALYZE = '/usr/bin/systemd-analyze'
const missing = !existsSync(ANALYZE)
if (missing && process.env.CI === 'true') throw new Error('the unit checks must run in CI: apt-get install systemd')
if (missing) console.warn('\n!!! SKIPPING the systemd unit checks: systemd-analyze is not installed\n')

const dir = tempDir('rock-legends-units-')
afterAll(() => removeDir(dir))

const units = blocks('ini')

describe.skipIf(missing)('the systemd units of docs/operations.md', () => {
  test('are the service and the template of its upgrades', () => {
    expect(units.length).toBe(2)
    expect(units[1]).toContain('--takeover')
  })

  // The template is checked as an instance of it, as `systemctl start rock-legends@green` makes one.
  for (const [index, name] of ['rock-legends.service', 'rock-legends@green.service'].entries())
    test(`${name} passes systemd-analyze verify without a warning`, async () => {
      const binary = await ensureBinary()
      const file = join(dir, name)
      writeFileSync(file, (units[index] as string).replaceAll('/usr/local/bin/rock-legends', binary))
      const result = run([ANALYZE, 'verify', file])
      expect(result).toEqual({ code: 0, output: '' })
    })
})
