// The Patroni configuration of docs/operations.md ("When the primary fails over"), as written there, checked by
// Debian's Patroni itself (`patroni --validate-config`), and saying what keeps acknowledged writes through a
// failover: synchronous replication, with only the synchronous standby promoted. Without Patroni the test skips and
// says so, except under CI=true (.ci/run installs it).
import { afterAll, describe, expect, test } from 'bun:test'
import { existsSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { removeDir, tempDir } from '../support/binary.ts'
import { run } from '../support/proxies.ts'

const PATRONI = '/usr/bin/patroni'
const missing = !existsSync(PATRONI)
if (missing && process.env.CI === 'true')
  throw new Error('the Patroni configuration must be checked in CI, but patroni is missing (apt-get install patroni)')
if (missing)
  console.warn('skipping the Patroni configuration check: patroni is not installed (apt-get install patroni)')

const page = readFileSync(join(import.meta.dir, '../../docs/operations.md'), 'utf8')
const documented = [...page.matchAll(/^```yml\n([\s\S]*?)^```$/gm)]
  .map((match) => match[1] as string)
  .filter((block) => /^scope: /m.test(block))
const dir = tempDir('rock-legends-patroni-')
afterAll(() => removeDir(dir))

describe('the Patroni configuration of docs/operations.md', () => {
  test('is there once, with synchronous replication', () => {
    expect(documented).toHaveLength(1)
    const config = Bun.YAML.parse(documented[0] as string) as {
      bootstrap: { dcs: { synchronous_mode: boolean; postgresql: { parameters: Record<string, string> } } }
    }
    expect(config.bootstrap.dcs.synchronous_mode).toBe(true)
    expect(config.bootstrap.dcs.postgresql.parameters.synchronous_commit).toBe('remote_apply')
  })

  test.skipIf(missing)('passes patroni --validate-config', () => {
    const file = join(dir, 'config.yml')
    writeFileSync(file, documented[0] as string)
    const checked = run([PATRONI, '--validate-config', file])
    expect({ code: checked.code, output: checked.output.trim() }).toEqual({ code: 0, output: '' })
  })
})
