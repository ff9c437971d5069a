import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import pkg from '../../package.json' with { type: 'json' }
import { ensureBinary, freePort, removeDir, tempDir } from '../support/binary.ts'
import { postgresAvailable, skipWithoutPostgres, testPostgres } from '../support/postgres.ts'
import { type Block, documentationPages, readPage, type WalkthroughPage, walkthroughPage } from './markdown.ts'

// The README's walkthrough and the docs pages', run as written: every ```sh block, in document order, against the
// compiled executable.
//
// - Pages: README.md and every docs/*.md. Each page with a block to run gets its own session: one bash shell, so
//   variables one block sets are there for the next. A page that goes on from another's shell says so with
//   `<!-- walkthrough: after README.md -->` (its text says it too, for the reader): its session runs that page's
//   blocks first, as a reader who follows the README's Quick start and then opens the page would. So docs/api.md runs
//   after the README's blocks have started the server and set `API` and `KEY`, on a fresh data file, and its ids are
//   those it shows.
// - Markers (test/readme/markdown.ts): an HTML comment on the line just before a fence, invisible on GitHub.
//   `<!-- walkthrough: illustrative -->` skips the block: the first commands (`bun run start` in the foreground, the
//   whole test suite), installing Bun and building (this test builds dist/rock-legends itself with ensureBinary,
//   which runs package.json's own `build` script), and installing the npm package, which is not on the registry.
//   `<!-- walkthrough: background -->` marks the block that starts the server with `&`: after it the script waits for
//   /healthz. Any other marker, or a marker not followed by a shell fence, fails the test, so a marker cannot drift
//   away from its block. Blocks in other languages are not run (the npm recipes are run by test/release/).
// - Where: each session in a throw-away directory of its own in which `dist/rock-legends` is a symlink to the built
//   executable, so `./dist/rock-legends` and the default data file `./data/db.json` are those of a fresh clone. Port
//   3000 becomes a free port: `PORT` (which the executable honours) is set for the script, and `127.0.0.1:3000` in
//   the blocks is rewritten to it; so are the replicas' ports and database. The environment is otherwise empty but
//   for PATH and HOME.
// - How: `bash` with `set -euo pipefail`; an ERR trap names the page and line of the failing block. Each block's
//   output is delimited so the checks below can read it. The script and the servers it starts run in their own
//   process group (`detached`), which is killed at the end whatever happened. Sessions run side by side.
// - What counts: each script exits 0 after its last block; every output comment of a block (a full-line comment
//   starting with `{`, `HTTP/` or `Location:`, with `…` standing for any text) appears in that block's output; and the
//   servers' access log shows that only the errors the pages mean to show were answered with a status of 400 or more
//   (so a write refused for want of a credential cannot pass for a success just because curl exits 0).

/** The errors each page means to show, as the access log writes them, in order. */
const PAGE_ERRORS: Record<string, string[]> = {
  'README.md': ['POST /api/v1/artists 401'],
  'docs/api.md': [
    'DELETE /api/v1/artists/33 400',
    'POST /api/v1/artists/33/albums 422',
    'PUT /api/v1/artists/33 412',
    'POST /api/v1/artists 401',
    'GET /api/v1/user/me 401',
    'POST /api/v1/user/login 403',
  ],
}

/** The databases the docs name (the replicas section's, the move's): the test points each at a fresh one of its own. */
const DOCS_DATABASE = /postgres:\/\/postgres@\/\w+\?host=\/var\/run\/postgresql/
const docsDatabases = (blocks: Block[]) => [
  ...new Set(blocks.flatMap((block) => block.text.match(new RegExp(DOCS_DATABASE, 'g')) ?? [])),
]
/** The ports the replicas listen on in the docs, which the test moves to free ones. */
const REPLICA_PORTS = ['3001', '3002']

const pages = new Map<string, WalkthroughPage>(
  documentationPages().map((path) => [path, walkthroughPage(path, readPage(path))]),
)

/** The pages a page's session runs, in order: the page it goes on from (and that one's, and so on), then itself. */
function chain(path: string, seen: string[] = []): WalkthroughPage[] {
  const page = pages.get(path)
  if (!page) throw new Error(`${seen.at(-1)}: continues ${path}, which is not a page of the walkthrough`)
  if (seen.includes(path)) throw new Error(`${path}: the pages continue each other in a circle`)
  return [...(page.after ? chain(page.after, [...seen, path]) : []), page]
}

const allBlocks = [...pages.values()].flatMap((page) => page.blocks)
const runsBlocks = (page: WalkthroughPage) => page.blocks.some((block) => block.marker !== 'illustrative')

/** One shell session: the page it is for, and the blocks it runs, its chain's and its own. */
interface Session {
  page: string
  chain: string[]
  blocks: Block[]
}

const sessions: Session[] = [...pages.values()].filter(runsBlocks).map((page) => {
  const pagesRun = chain(page.path)
  return {
    page: page.path,
    chain: pagesRun.map((run) => run.path),
    blocks: pagesRun.flatMap((run) => run.blocks).filter((block) => block.marker !== 'illustrative'),
  }
})

const where = (block: Block) => `${block.page}:${block.line}`
const begin = (block: Block) => `@@ walkthrough: ${where(block)} @@`
const END = '@@ walkthrough: end @@'

/** Where a session's servers listen and keep their data, in place of the pages' own. */
interface Places {
  port: number
  replicaPorts: number[]
  /** Each docs database's fresh one; `undefined` when this machine has no PostgreSQL (the blocks using one are skipped). */
  databases: Map<string, string> | undefined
}

/** One bash script of a session's blocks, in order, each announced on stdout and named for the ERR trap. */
function script(blocks: Block[], { port, replicaPorts, databases }: Places): string {
  const health = `http://127.0.0.1:${port}/healthz`
  const parts = [
    'set -euo pipefail',
    `trap 'echo "walkthrough: the block at $WALKTHROUGH_AT failed (exit $?)" >&2' ERR`,
  ]
  for (const block of blocks) {
    if (DOCS_DATABASE.test(block.text) && databases === undefined) continue
    parts.push(`WALKTHROUGH_AT='${where(block)}'`, `printf '\\n%s\\n' '${begin(block)}'`, block.text)
    if (block.marker === 'background')
      parts.push(
        `for _ in $(seq 100); do curl -s -o /dev/null ${health} && break; sleep 0.1; done`,
        `curl -sf -o /dev/null ${health}`,
      )
  }
  parts.push(`printf '\\n%s\\n' '${END}'`)
  let text = parts.join('\n').replaceAll('127.0.0.1:3000', `127.0.0.1:${port}`)
  REPLICA_PORTS.forEach((docsPort, i) => {
    text = text.replaceAll(`127.0.0.1:${docsPort}`, `127.0.0.1:${replicaPorts[i]}`)
    text = text.replaceAll(`--port ${docsPort}`, `--port ${replicaPorts[i]}`)
  })
  for (const [docs, fresh] of databases ?? []) text = text.replaceAll(docs, fresh)
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

/** What a session's script did. */
interface Outcome {
  exitCode: number | undefined
  stdout: string
  stderr: string
  /** Each block's output, by `page:line`. */
  outputs: Map<string, string>
  /** The blocks that ran (those needing a PostgreSQL this machine lacks are skipped). */
  ran: Block[]
}

const outcomes = new Map<string, Outcome>()
const dirs: string[] = []

/** Kills what is left of a script's process group (the background servers), then waits until it is gone. */
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

/** Runs one session in a fresh clone of its own and records what it did. */
async function runSession(session: Session, binary: string): Promise<Outcome> {
  const dir = tempDir('rock-legends-walkthrough-')
  dirs.push(dir)
  const work = join(dir, 'clone')
  mkdirSync(join(work, 'dist'), { recursive: true })
  symlinkSync(binary, join(work, 'dist/rock-legends'))
  const port = freePort()
  // The replicas section needs PostgreSQL: the harness's own (under CI=true it must be there; elsewhere its blocks
  // are skipped, saying so).
  let databases: Map<string, string> | undefined
  const named = docsDatabases(session.blocks)
  if (named.length > 0) {
    if (!skipWithoutPostgres()) {
      const postgres = await testPostgres()
      databases = new Map()
      for (const docs of named) databases.set(docs, postgres.url(await postgres.freshDatabase()))
    } else console.warn(`${session.page}: the blocks that need PostgreSQL are not run: ${postgresAvailable()}`)
  }
  const ran = session.blocks.filter((block) => databases !== undefined || !DOCS_DATABASE.test(block.text))
  const file = join(dir, 'walkthrough.sh')
  writeFileSync(file, script(session.blocks, { port, replicaPorts: [freePort(), freePort()], databases }))
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
  let exitCode: number | undefined
  try {
    exitCode = await child.exited
  } finally {
    clearTimeout(timer)
    await killGroup(child.pid)
  }
  const stdout = readFileSync(join(dir, 'stdout'), 'utf8').replaceAll('\r', '')
  const stderr = readFileSync(join(dir, 'stderr'), 'utf8')
  const outputs = new Map<string, string>()
  const sections = stdout.split(/^@@ walkthrough: (?:(\S+:\d+)|end) @@$/m)
  for (let i = 1; i < sections.length; i += 2)
    if (sections[i] !== undefined) outputs.set(sections[i] as string, sections[i + 1] as string)
  return { exitCode, stdout, stderr, outputs, ran }
}

beforeAll(async () => {
  const binary = await ensureBinary()
  const results = await Promise.all(sessions.map((session) => runSession(session, binary)))
  sessions.forEach((session, i) => {
    outcomes.set(session.page, results[i] as Outcome)
  })
}, 180_000)

afterAll(() => {
  for (const dir of dirs) removeDir(dir)
})

const outcome = (page: string) => outcomes.get(page) as Outcome

describe('the walkthrough of the README and docs/', () => {
  test('the README is a front door: at most 300 lines, and its first commands are the two of a fresh machine', () => {
    const readme = readPage('README.md')
    expect(readme.split('\n').length).toBeLessThanOrEqual(300)
    const first = /^```\w*\n([\s\S]*?)\n```$/m.exec(readme)?.[1] ?? ''
    const commands = first.split('\n').map((line) => line.replace(/\s+#.*$/, ''))
    expect(commands).toEqual([
      'npm install -g bun@1.4.5 && bun install --frozen-lockfile && bun run start',
      'bun install --frozen-lockfile && bun run test',
    ])
    expect(pkg.scripts.start).toBeDefined()
    expect(pkg.scripts.test).toBeDefined()
  })

  test('marks few blocks illustrative, builds with the script the test uses, and starts one server', () => {
    expect(allBlocks.filter((block) => block.marker !== 'illustrative').length).toBeGreaterThanOrEqual(12)
    // The README's two set-up commands, the backup commands of docs/operations.md (they need the server stopped), and
    // the npm recipe of docs/testing-with-rock-legends.md. The container image's podman commands are run by the
    // release step instead, from the pages (test/release/container.podman.test.ts).
    const illustrative = allBlocks.filter((block) => block.marker === 'illustrative')
    expect(illustrative.filter((block) => !block.text.startsWith('podman ')).length).toBeLessThanOrEqual(4)
    expect(allBlocks.filter((block) => block.marker === 'background').map(where)).toEqual([
      expect.stringMatching(/^README\.md:\d+$/),
    ])
    expect(allBlocks.filter((block) => block.marker === 'background').map((block) => block.text)).toEqual([
      './dist/rock-legends --seed --api-key my-secret-key &',
    ])
    expect(allBlocks.some((block) => block.marker === 'illustrative' && block.text.includes('bun run build'))).toBe(
      true,
    )
    expect(pkg.scripts.build).toContain('--outfile dist/rock-legends')
  })

  test('runs the README, and every docs page with examples after the README, each in its own shell', () => {
    expect(sessions.map((session) => [session.page, session.chain])).toEqual([
      ['README.md', ['README.md']],
      ['docs/api.md', ['README.md', 'docs/api.md']],
      ['docs/operations.md', ['README.md', 'docs/operations.md']],
    ])
    // Every page's errors are declared, and no page that runs nothing declares any.
    for (const page of Object.keys(PAGE_ERRORS)) expect(sessions.map((session) => session.page)).toContain(page)
  })

  describe.each(sessions.map((session) => [session.page, session] as const))('%s', (_page, session) => {
    test('runs every block that is not illustrative, in order, with exit 0', () => {
      const { exitCode, stderr, stdout, outputs, ran } = outcome(session.page)
      const failed = /walkthrough: the block at \S+ failed.*/.exec(stderr)?.[0] ?? `exit ${exitCode}`
      const verdict =
        exitCode === 0 ? failed : `${failed}; the script's last words:\n${stderr.split('\n').slice(-12).join('\n')}`
      expect(verdict).toBe('exit 0')
      expect(stdout).toContain(END)
      expect([...outputs.keys()]).toEqual(ran.map(where))
    })

    test('prints what each block says it prints', () => {
      const { outputs, ran } = outcome(session.page)
      const missing = ran.flatMap((block) =>
        expectedOutputs(block)
          .filter(({ pattern }) => !pattern.test(outputs.get(where(block)) ?? ''))
          .map(({ comment }) => `${where(block)}: ${comment}`),
      )
      expect(missing).toEqual([])
      expect(ran.reduce((count, block) => count + expectedOutputs(block).length, 0)).toBeGreaterThanOrEqual(2)
    })

    test('answers an error only where its pages show one', () => {
      const { stderr } = outcome(session.page)
      const access = [...stderr.matchAll(/^(GET|POST|PUT|DELETE|PATCH) (\S+) (\d{3}) /gm)]
      const errors = access.filter((match) => Number(match[3]) >= 400).map((match) => match.slice(1, 4).join(' '))
      expect(errors).toEqual(session.chain.flatMap((page) => PAGE_ERRORS[page] ?? []))
      expect(access.length).toBeGreaterThanOrEqual(3)
    })
  })

  test('docs/api.md: a create with the service key answers 201 with a Location, which the later examples use', () => {
    const { outputs, stderr } = outcome('docs/api.md')
    const created = pages.get('docs/api.md')?.blocks.find((block) => block.text.includes('CREATED=$(curl'))
    expect(created).toBeDefined()
    const output = outputs.get(where(created as Block)) ?? ''
    expect(output).toContain('HTTP/1.1 201 Created')
    expect(output).toMatch(/^Location: \/api\/v1\/artists\/33$/m)
    expect(stderr).toMatch(/^POST \/api\/v1\/artists\/33\/albums 201 /m)
    const api = [...stderr.matchAll(/^(?:GET|POST|PUT|DELETE|PATCH) \/api\/v1\//gm)]
    expect(api.length).toBeGreaterThanOrEqual(20)
  })

  test('output comments are checked: all pages together show at least ten', () => {
    expect(allBlocks.reduce((count, block) => count + expectedOutputs(block).length, 0)).toBeGreaterThanOrEqual(10)
  })
})

describe("the walkthrough's reader", () => {
  test('a marker must be known and just before a shell fence; a page continues one page at most', () => {
    expect(() => walkthroughPage('x.md', '<!-- walkthrough: sometimes -->\n```sh\nls\n```')).toThrow(
      'x.md:1: unknown marker sometimes',
    )
    expect(() => walkthroughPage('x.md', '<!-- walkthrough: background -->\n\n```sh\nls &\n```')).toThrow(
      'just before a shell fence',
    )
    expect(() => walkthroughPage('x.md', '<!-- walkthrough: illustrative -->\n```js\nx()\n```')).toThrow(
      'just before a shell fence',
    )
    expect(() =>
      walkthroughPage('x.md', '<!-- walkthrough: after README.md -->\n<!-- walkthrough: after docs/api.md -->'),
    ).toThrow('one other page only')
    expect(() => walkthroughPage('x.md', '```sh\nls\n')).toThrow('x.md:1: unclosed fence')
  })

  test('reads blocks with their markers and the page a page continues', () => {
    const page = walkthroughPage(
      'docs/x.md',
      [
        '# X',
        '<!-- walkthrough: after README.md -->',
        '```sh',
        'a',
        '```',
        '<!-- walkthrough: illustrative -->',
        '```bash',
        'b',
        '```',
        '```js',
        'c',
        '```',
      ].join('\n'),
    )
    expect(page.after).toBe('README.md')
    expect(page.blocks).toEqual([
      { page: 'docs/x.md', line: 3, marker: 'run', text: 'a' },
      { page: 'docs/x.md', line: 7, marker: 'illustrative', text: 'b' },
    ])
  })

  test('a page that continues an unknown page, or pages that continue each other, are refused', () => {
    pages.set('docs/nowhere.md', { path: 'docs/nowhere.md', after: 'docs/gone.md', blocks: [] })
    pages.set('docs/a.md', { path: 'docs/a.md', after: 'docs/b.md', blocks: [] })
    pages.set('docs/b.md', { path: 'docs/b.md', after: 'docs/a.md', blocks: [] })
    try {
      expect(() => chain('docs/nowhere.md')).toThrow('docs/nowhere.md: continues docs/gone.md')
      expect(() => chain('docs/a.md')).toThrow('in a circle')
    } finally {
      for (const path of ['docs/nowhere.md', 'docs/a.md', 'docs/b.md']) pages.delete(path)
    }
  })
})
