import { afterAll, describe, expect, test } from 'bun:test'
import { existsSync, mkdirSync, writeFileSync } from 'node:fs'
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

const [service = '', acme = '', https = '', template = ''] = blocks('ini')

describe.skipIf(missing)('the systemd units of docs/operations.md', () => {
  test('are the service, its lines for --https and for certificate files, and the template of its upgrades', () => {
    expect(blocks('ini').length).toBe(4)
    expect(acme).toContain('--https api.example.com')
    expect(acme).toContain('AmbientCapabilities=CAP_NET_BIND_SERVICE')
    expect(https).toContain('AmbientCapabilities=CAP_NET_BIND_SERVICE')
    expect(template).toContain('--takeover')
  })

  // The lines for HTTPS are a drop-in (`systemctl edit`): checked as systemd reads them, after the unit's own. The
  // template is checked as an instance of it, as `systemctl start rock-legends@green` makes one.
  const units: [string, string, string][] = [
    ['rock-legends.service', '', service],
    ['rock-legends.service', ' with the lines for --https', `${service}\n${acme}`],
    ['rock-legends.service', ' with the lines for certificate files', `${service}\n${https}`],
    ['rock-legends@green.service', '', template],
  ]
  for (const [index, [name, what, unit]] of units.entries())
    test(`${name}${what} passes systemd-analyze verify without a warning`, async () => {
      const binary = await ensureBinary()
      const file = join(dir, `${index}`, name)
      mkdirSync(join(dir, `${index}`), { recursive: true })
      writeFileSync(file, unit.replaceAll('/usr/local/bin/rock-legends', binary))
      const result = run([ANALYZE, 'verify', file])
      expect(result).toEqual({ code: 0, output: '' })
    })
})
