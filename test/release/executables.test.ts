import { beforeAll, describe, expect, test } from 'bun:test'
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { inspectExecutable } from '../../scripts/inspect-executable.ts'
import { adhocSign } from '../../scripts/macho-sign.ts'
import { hostTarget } from '../../scripts/pack.ts'
import { argon2Package, nativeModuleOf, outfileOf, TARGETS } from '../../scripts/release.ts'
import { MAX_OVER_FLOOR, measureSize } from '../../scripts/size.ts'

// `bun run build:all` as a release manager runs it, then every file checked independently of the script's report.
// `bun run test:release` (CI's release step) builds and checks every platform; run without ROCK_LEGENDS_RELEASE=all
// (`bun test --path-ignore-patterns='npm/recipes/**' test/release/executables.test.ts`), this machine's only, so that
// nothing downloads another platform's runtime.
const ROOT = resolve(import.meta.dir, '../..')
const ALL = process.env.ROCK_LEGENDS_RELEASE === 'all'
const HOST = hostTarget()
/** The targets this run builds and checks. */
const CHECKED = ALL ? TARGETS : TARGETS.filter((target) => target === HOST)

function newest(path: string): number {
  const stat = statSync(path)
  if (!stat.isDirectory()) return stat.mtimeMs
  return Math.max(0, ...readdirSync(path).map((name) => newest(join(path, name))))
}

/** Runs `bun run build:all` unless every executable is newer than every source; resolves with its output. */
async function ensureRelease(): Promise<string> {
  const sources = Math.max(
    ...['src', 'data/legends.json', 'package.json', 'bun.lock'].map((p) => newest(join(ROOT, p))),
  )
  const built = CHECKED.map((target) => statSync(outfileOf(target), { throwIfNoEntry: false })?.mtimeMs ?? 0)
  if (Math.min(...built) > sources) return '(up to date)'
  const names = ALL ? [] : CHECKED.map((target) => target.name)
  const build = Bun.spawn(['bun', 'run', 'build:all', ...names], { cwd: ROOT, stdout: 'pipe', stderr: 'pipe' })
  const [stdout, stderr, code] = await Promise.all([
    new Response(build.stdout).text(),
    new Response(build.stderr).text(),
    build.exited,
  ])
  if (code !== 0) throw new Error(`build:all failed (${code}):\n${stdout}\n${stderr}`)
  return stdout
}

const files = new Map<string, Buffer>()
beforeAll(async () => {
  await ensureRelease()
  for (const target of CHECKED) files.set(target.name, readFileSync(outfileOf(target)))
}, 180_000)

describe('bun run build:all', () => {
  test('builds this machine’s executable by default, every platform’s in the release step', () => {
    expect(HOST).toBeDefined()
    expect(CHECKED.map((target) => target.name)).toEqual(ALL ? TARGETS.map((t) => t.name) : [HOST?.name as string])
  })

  test.each(CHECKED.map((target) => [target.name, target] as const))(
    '%s: the right format and CPU, carrying its own argon2 module',
    async (_, target) => {
      const bytes = files.get(target.name) as Buffer
      const info = inspectExecutable(bytes)
      expect(info).toMatchObject({ format: target.format, arch: target.arch })
      if (target.format === 'macho') expect(info.signature).toBe('valid')
      const module = readFileSync(nativeModuleOf(await argon2Package(target)))
      expect(bytes.indexOf(module)).toBeGreaterThan(0)
      // And no other platform's: each executable carries exactly one argon2 module.
      for (const other of TARGETS.filter((each) => each.argon2 !== target.argon2)) {
        const foreign = readFileSync(nativeModuleOf(await argon2Package(other)))
        expect(bytes.indexOf(foreign.subarray(0, 4096))).toBe(-1)
      }
    },
    // On a fresh clone the other platforms' argon2 packages are fetched first (npm pack, one after the other).
    120_000,
  )

  test('lists every executable in dist/SHA256SUMS with its hash', () => {
    const sums = readFileSync(join(ROOT, 'dist/SHA256SUMS'), 'utf8')
    for (const target of CHECKED) {
      const hash = new Bun.CryptoHasher('sha256').update(files.get(target.name) as Buffer).digest('hex')
      expect(sums).toContain(`${hash}  ${outfileOf(target).split('/').at(-1)}`)
    }
  })

  test(`${HOST?.name} runs here: it serves, and signs up and logs in (argon2 hashing and verifying)`, async () => {
    expect(await signUpAndLogIn([outfileOf(HOST as (typeof TARGETS)[number])])).toEqual([201, 200, 401])
  })

  test('each executable is within 15 MiB of a bare `bun build --compile` hello world for its platform', async () => {
    for (const target of CHECKED) {
      const { floor, ours } = await measureSize(target)
      expect(ours - floor).toBeLessThan(MAX_OVER_FLOOR)
    }
  }, 120_000)

  const qemu = '/usr/bin/qemu-aarch64-static'
  const sysroot = '/usr/aarch64-linux-gnu'
  const emulated = existsSync(qemu) && existsSync(join(sysroot, 'lib/libgcc_s.so.1'))
  test.skipIf(!emulated || !ALL)(
    'linux-arm64 runs under qemu (when installed): it signs up and logs in',
    async () => {
      const arm64 = TARGETS.find((target) => target.name === 'linux-arm64') as (typeof TARGETS)[number]
      expect(await signUpAndLogIn([qemu, '-L', sysroot, outfileOf(arm64)])).toEqual([201, 200, 401])
    },
    60_000,
  )
})

describe.skipIf(!ALL)('Mach-O signatures (bun run test:release)', () => {
  test("our ad-hoc signer writes exactly the signature Bun's own darwin-arm64 signer writes", () => {
    const bun = files.get('darwin-arm64') as Buffer
    expect(inspectExecutable(bun).signature).toBe('valid')
    // Bun names the code "a.out"; given the same name, re-signing must not change a single byte.
    expect(Buffer.from(adhocSign(bun, 'a.out')).equals(bun)).toBe(true)
  })

  test('a changed byte, or a stale signature, is caught', () => {
    const copy = Buffer.from(files.get('darwin-x64') as Buffer)
    expect(inspectExecutable(copy).signature).toBe('valid')
    const index = copy.length >> 1
    copy[index] = (copy[index] as number) ^ 0xff
    expect(inspectExecutable(copy).signature).toBe('invalid')
  })
})

describe('docs/releases.md', () => {
  test('states, for every target, what was verified and how to run it', () => {
    const readme = readFileSync(join(ROOT, 'docs/releases.md'), 'utf8')
    for (const target of TARGETS) expect(readme).toContain(`| \`${outfileOf(target).split('/').at(-1)}\` |`)
  })
})

/** Starts an executable (optionally through an emulator), signs up, logs in, and tries a wrong password. */
async function signUpAndLogIn(command: string[]): Promise<number[]> {
  const child = Bun.spawn([...command, '--port', '0', '--data', ':memory:', '--log', 'off'], {
    stdin: 'ignore',
    stdout: 'pipe',
    stderr: 'pipe',
    env: { PATH: process.env.PATH ?? '' },
  })
  try {
    const reader = child.stdout.getReader()
    let text = ''
    while (!text.includes('\n')) {
      const { value, done } = await reader.read()
      if (done) throw new Error(`exited before it was ready: ${await new Response(child.stderr).text()}`)
      text += new TextDecoder().decode(value)
    }
    const url = /listening on (\S+)/.exec(text)?.[1]
    const post = (path: string, body: unknown) =>
      fetch(`${url}/api/v1/user/${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      }).then((response) => response.status)
    const user = { name: 'Release', email: 'release@rock-legends.com', password: 'i-love-rock' }
    return [
      await post('signup', user),
      await post('login', { email: user.email, password: user.password }),
      await post('login', { email: user.email, password: 'not-the-password' }),
    ]
  } finally {
    child.kill('SIGKILL')
    await child.exited
  }
}
