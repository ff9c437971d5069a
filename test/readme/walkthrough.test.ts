import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import pkg from '../../package.json' with { type: 'json' }
import { ensureBinary, removeDir, tempDir } from '../support/binary.ts'
import { postgresAvailable, skipWithoutPostgres, testPostgres } from '../support/postgres.ts'

// The README's walkthrough, run as written (issue 18): every ```sh block, in document order, in one bash shell, so
// variables one block sets are there for the next, against the compiled executable.
//
// - Markers: an HTML comment on the line just before a fence, invisible on GitHub.
//   `<!-- walkthrough: illustrative -->` skips the block: the first commands (`bun run start` in the foreground, the
//   whole test suite), installing Bun and building (this test builds
//   dist/rock-legends itself with ensureBinary, which runs package.json's own `build` script), and installing the
//   npm package, which is not on the registry. `<!-- walkthrough: background -->` marks the block that starts the
//   server with `&`: after it the script waits for /healthz. Any other marker, or a marker not followed by a shell
//   fence, fails the test, so a marker cannot drift away from its block. Blocks in other languages are not run.
// - Where: a throw-away directory in which `dist/rock-legends` is a symlink to the built executable, so
//   `./dist/rock-legends` and the default data file `./data/db.json` are those of a fresh clone. Port 3000 becomes a
//   free port: `PORT` (which the executable honours) is set for the script, and `127.0.0.1:3000` in the blocks is
//   rewritten to it. The environment is otherwise empty but for PATH and HOME.
// - How: `bash` with `set -euo pipefail`; an ERR trap names the README line of the failing block. Each block's output
//   is delimited so the checks below can read it. The script and the server it starts run in their own process group
//   (`detached`), which is killed at the end whatever happened.
// - What counts: the script exits 0 after the last block; every output comment of a block (a full-line comment
//   starting with `{`, `HTTP/` or `Location:`, with `…` standing for any text) appears in that block's output; and the
//   server's access log shows that only the errors the README means to show were answered with a status of 400 or
//   more (so a write refused for want of a credential cannot pass for a success just because curl exits 0).

const ROOT = resolve(import.meta.dir, '../..')
const README = join(ROOT, 'README.md')
const SHELLS = new Set(['sh', 'bash', 'shell'])
const MARKERS = new Set(['illustrative', 'background'])

interface Block {
  /** The README line of the opening fence, 1-based. */
  line: number
  marker: 'run' | 'illustrative' | 'background'
  text: string
}

/** The README's shell blocks with their markers; throws on a marker that is unknown or not before a shell fence. */
function shellBlocks(readme: string): Block[] {
  const lines = readme.split('\n')
  const blocks: Block[] = []
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i] as string
    const marker = /^<!--\s*walkthrough:\s*(\S+)\s*-->$/.exec(line.trim())
    if (marker) {
      if (!MARKERS.has(marker[1] as string)) throw new Error(`README.md:${i + 1}: unknown marker ${marker[1]}`)
      if (!SHELLS.has(/^```(\w*)/.exec(lines[i + 1] ?? '')?.[1] ?? ''))
        throw new Error(`README.md:${i + 1}: a walkthrough marker must be just before a shell fence`)
      continue
    }
    const fence = /^```(\w*)/.exec(line)
    if (!fence) continue
    const end = lines.indexOf('```', i + 1)
    if (end < 0) throw new Error(`README.md:${i + 1}: unclosed fence`)
    if (SHELLS.has(fence[1] as string)) {
      const previous = /walkthrough:\s*(\S+)/.exec(lines[i - 1] ?? '')?.[1]
      blocks.push({
        line: i + 1,
        marker: (previous ?? 'run') as Block['marker'],
        text: lines.slice(i + 1, end).join('\n'),
      })
    }
    i = end
  }
  return blocks
}

/** A free loopback TCP port, as the kernel hands it out. */
function freePort(): number {
  const listener = Bun.listen({ hostname: '127.0.0.1', port: 0, socket: { data() {} } })
  const { port } = listener
  listener.stop(true)
  return port
}

const begin = (line: number) => `@@ walkthrough: README.md:${line} @@`
const END = '@@ walkthrough: end @@'

/** The database of the README's replicas section, which the test points at a fresh one of its own PostgreSQL. */
const README_DATABASE = 'postgres://postgres@/rock_legends?host=/var/run/postgresql'
/** The ports the README's replicas listen on, which the test moves to free ones. */
const REPLICA_PORTS = ['3001', '3002']

/** Where the script's servers listen and keep their data, in place of the README's own. */
interface Places {
  port: number
  replicaPorts: number[]
  /** A fresh database's URL; `undefined` when this machine has no PostgreSQL (then the blocks using it are skipped). */
  database: string | undefined
}

/** One bash script of the blocks to run, in order, each announced on stdout and named for the ERR trap. */
function script(blocks: Block[], { port, replicaPorts, database }: Places): string {
  const health = `http://127.0.0.1:${port}/healthz`
  const parts = [
    'set -euo pipefail',
    `trap 'echo "walkthrough: the block at README.md:$WALKTHROUGH_LINE failed (exit $?)" >&2' ERR`,
  ]
  for (const block of blocks) {
    if (block.marker === 'illustrative') continue
    if (block.text.includes(README_DATABASE) && database === undefined) continue
    parts.push(`WALKTHROUGH_LINE=${block.line}`, `printf '\\n%s\\n' '${begin(block.line)}'`, block.text)
    if (block.marker === 'background')
      parts.push(
        `for _ in $(seq 100); do curl -s -o /dev/null ${health} && break; sleep 0.1; done`,
        `curl -sf -o /dev/null ${health}`,
      )
  }
  parts.push(`printf '\\n%s\\n' '${END}'`)
  let text = parts.join('\n').replaceAll('127.0.0.1:3000', `127.0.0.1:${port}`)
  REPLICA_PORTS.forEach((readmePort, i) => {
    text = text.replaceAll(`127.0.0.1:${readmePort}`, `127.0.0.1:${replicaPorts[i]}`)
    text = text.replaceAll(`--port ${readmePort}`, `--port ${replicaPorts[i]}`)
  })
  if (database) text = text.replaceAll(README_DATABASE, database)
  return `${text}\n`
}

/** The output comments of a block as patterns: full-line comments that show an answer, `…` matching anything. */
function expectedOutputs(block: Block): { comment: string; pattern: RegExp }[] {
  return block.text
    .split('\n')
    .map((line) => /^#\s+((?:\{|HTTP\/|Location:).*)$/.exec(line.trim())?.[1])
    .filter((comment): comment is string => comment !== undefined)
    .map((comment) => ({
      comment,
      pattern: new RegExp(
        comment
          .split('…')
          .map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
          .join('.*?'),
      ),
    }))
}

const blocks = shellBlocks(readFileSync(README, 'utf8'))
const run = blocks.filter((block) => block.marker !== 'illustrative')

let dir: string
let exitCode: number | undefined
let stdout = ''
let stderr = ''
/** Each run block's output, by its README line. */
const outputs = new Map<number, string>()

/** Kills what is left of the script's process group (the background server), then waits until it is gone. */
async function killGroup(pid: number) {
  const alive = () => {
    try {
      process.kill(-pid, 0)
      return true
    } catch {
      return false
    }
  }
  for (const [signal, wait] of [
    ['SIGTERM', 5000],
    ['SIGKILL', 2000],
  ] as const) {
    if (!alive()) return
    process.kill(-pid, signal)
    for (let waited = 0; waited < wait && alive(); waited += 50) await Bun.sleep(50)
  }
}

beforeAll(async () => {
  const binary = await ensureBinary()
  dir = tempDir('rock-legends-readme-')
  const work = join(dir, 'clone')
  mkdirSync(join(work, 'dist'), { recursive: true })
  symlinkSync(binary, join(work, 'dist/rock-legends'))
  const port = freePort()
  // The replicas section needs PostgreSQL: the harness's own (under CI=true it must be there; elsewhere its blocks
  // are skipped, saying so).
  let database: string | undefined
  if (!skipWithoutPostgres()) {
    const postgres = await testPostgres()
    database = postgres.url(await postgres.freshDatabase())
  } else console.warn(`the README's replicas section is not run: ${postgresAvailable()}`)
  const file = join(dir, 'walkthrough.sh')
  writeFileSync(file, script(blocks, { port, replicaPorts: [freePort(), freePort()], database }))
  const child = Bun.spawn(['bash', file], {
    cwd: work,
    env: { PATH: process.env.PATH ?? '', HOME: work, PORT: String(port) },
    stdin: 'ignore',
    stdout: Bun.file(join(dir, 'stdout')),
    stderr: Bun.file(join(dir, 'stderr')),
    detached: true,
  })
  // A block that hangs (a server that never answers, say) ends the script rather than the test run.
  const timer = setTimeout(() => process.kill(-child.pid, 'SIGKILL'), 90_000)
  try {
    exitCode = await child.exited
  } finally {
    clearTimeout(timer)
    await killGroup(child.pid)
    stdout = readFileSync(join(dir, 'stdout'), 'utf8').replaceAll('\r', '')
    stderr = readFileSync(join(dir, 'stderr'), 'utf8')
  }
  const sections = stdout.split(/^@@ walkthrough: (?:README\.md:(\d+)|end) @@$/m)
  for (let i = 1; i < sections.length; i += 2)
    if (sections[i] !== undefined) outputs.set(Number(sections[i]), sections[i + 1] as string)
}, 180_000)

afterAll(() => {
  if (dir) removeDir(dir)
})

describe('the README walkthrough', () => {
  test('marks few blocks illustrative, builds with the script the test uses, and starts one server', () => {
    expect(run.length).toBeGreaterThanOrEqual(11)
    expect(blocks.filter((block) => block.marker === 'illustrative').length).toBeLessThanOrEqual(3)
    expect(blocks.filter((block) => block.marker === 'background').map((block) => block.text)).toEqual([
      './dist/rock-legends --seed --api-key my-secret-key &',
    ])
    expect(blocks.some((block) => block.marker === 'illustrative' && block.text.includes('bun run build'))).toBe(true)
    expect(pkg.scripts.build).toContain('--outfile dist/rock-legends')
  })

  test('runs every block that is not illustrative, in order, with exit 0', () => {
    const failed = /walkthrough: the block at README\.md:\d+ failed.*/.exec(stderr)?.[0] ?? `exit ${exitCode}`
    const verdict =
      exitCode === 0 ? failed : `${failed}; the script's last words:\n${stderr.split('\n').slice(-12).join('\n')}`
    expect(verdict).toBe('exit 0')
    expect(stdout).toContain(END)
    expect([...outputs.keys()]).toEqual(run.map((block) => block.line))
  })

  test('prints what each block says it prints', () => {
    const missing = run.flatMap((block) =>
      expectedOutputs(block)
        .filter(({ pattern }) => !pattern.test(outputs.get(block.line) ?? ''))
        .map(({ comment }) => `README.md:${block.line}: ${comment}`),
    )
    expect(missing).toEqual([])
    expect(run.reduce((count, block) => count + expectedOutputs(block).length, 0)).toBeGreaterThanOrEqual(10)
  })

  test('a create with the service key answers 201 with a Location, which the later examples use', () => {
    const created = run.find((block) => block.text.includes('CREATED=$(curl'))
    const output = outputs.get(created?.line ?? 0) ?? ''
    expect(output).toContain('HTTP/1.1 201 Created')
    expect(output).toMatch(/^Location: \/api\/v1\/artists\/33$/m)
    expect(stderr).toMatch(/^POST \/api\/v1\/artists\/33\/albums 201 /m)
  })

  test('answers an error only where the README shows one: the deprecated delete, a revoked key, a logged-out token, a disabled account', () => {
    const access = [...stderr.matchAll(/^(GET|POST|PUT|DELETE|PATCH) (\S+) (\d{3}) /gm)]
    const errors = access.filter((match) => Number(match[3]) >= 400).map((match) => match.slice(1, 4).join(' '))
    expect(errors).toEqual([
      'DELETE /api/v1/artists/33 400',
      'POST /api/v1/artists 401',
      'GET /api/v1/user/me 401',
      'POST /api/v1/user/login 403',
    ])
    expect(access.filter((match) => match[2]?.startsWith('/api/v1/')).length).toBeGreaterThanOrEqual(20)
  })
})
