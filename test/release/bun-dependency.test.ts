/**
 * The repository as a dependency of a Bun project, the in-process route of docs/testing-with-rock-legends.md: a new
 * project adds it each of the three ways the page gives (by path, by git URL, from the tarball of `bun pm pack`) and
 * runs the page's `bun:test` file with `bun test`, as a user would. The packages the repository depends on come from
 * the npm registry through Bun's cache (warm after `bun install` in the clone); `rock-legends` itself never does.
 *
 * Installed so, the package lives under the project's node_modules and its dependencies are hoisted beside it: where
 * Bun runs no macro (src/seed/seed.ts) and where the repository's own node_modules is not (src/docs/scalar.ts).
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import {
  chmodSync,
  copyFileSync,
  existsSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  statSync,
  writeFileSync,
} from 'node:fs'
import { dirname, join, resolve } from 'node:path'
import { removeDir, tempDir } from '../support/binary.ts'

const ROOT = resolve(import.meta.dir, '../..')
const PAGE = 'docs/testing-with-rock-legends.md'
const SECTION = '## In-process, from Bun and TypeScript (the repository)'
/** Installs and test runs of a project, on a small machine shared with the rest of the release step. */
const TIMEOUT = 180_000

/** The compiler options `bun init` (Bun 1.4.5) writes, its JSX aside. */
const BUN_INIT_TSCONFIG = {
  lib: ['ESNext'],
  target: 'ESNext',
  module: 'Preserve',
  moduleDetection: 'force',
  allowJs: true,
  types: ['bun'],
  moduleResolution: 'bundler',
  allowImportingTsExtensions: true,
  verbatimModuleSyntax: true,
  noEmit: true,
  strict: true,
  skipLibCheck: true,
  noFallthroughCasesInSwitch: true,
  noUncheckedIndexedAccess: true,
  noImplicitOverride: true,
}

/** Why the test cannot run here, if it cannot: it copies what git holds, and installs by a git URL. */
function gitMissing(): string | undefined {
  if (!Bun.which('git')) return 'git is not installed (apt-get install git)'
  const inside = Bun.spawnSync(['git', 'rev-parse', '--is-inside-work-tree'], { cwd: ROOT, stderr: 'pipe' })
  if (inside.exitCode !== 0) return `${ROOT} is not a git checkout`
  return undefined
}
const missing = gitMissing()
if (missing && process.env.CI === 'true') throw new Error(`the Bun dependency test must run in CI, but ${missing}`)
if (missing) console.warn(`skipping the Bun dependency test: ${missing}`)

/** The page's `bun:test` file of the in-process section: its name (from its first line) and its text. */
function documentedTestFile(): { name: string; text: string } {
  const page = readFileSync(join(ROOT, PAGE), 'utf8')
  const start = page.indexOf(SECTION)
  if (start < 0) throw new Error(`${PAGE} has no section "${SECTION}"`)
  const end = page.indexOf('\n## ', start + SECTION.length)
  const blocks = [...page.slice(start, end < 0 ? undefined : end).matchAll(/^```ts\n([\s\S]*?)\n```$/gm)]
  if (blocks.length !== 1) throw new Error(`the section "${SECTION}" shows ${blocks.length} TypeScript blocks, not 1`)
  const text = `${blocks[0]?.[1]}\n`
  const name = /^\/\/ (\S+\.test\.ts)\n/.exec(text)?.[1]
  if (!name) throw new Error(`the section's TypeScript block does not start with the name of its file`)
  return { name, text }
}

/** Runs a command to completion; its exit code and what it printed. */
async function run(command: string[], cwd: string) {
  // Nothing of this run's own settings (the executable it built, the release it makes) reaches the project.
  const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('ROCK_LEGENDS_')))
  const child = Bun.spawn(command, { cwd, env, stdin: 'ignore', stdout: 'pipe', stderr: 'pipe' })
  const [stdout, stderr, code] = await Promise.all([
    new Response(child.stdout).text(),
    new Response(child.stderr).text(),
    child.exited,
  ])
  return { code, stdout, output: `$ ${command.join(' ')}\n${stdout}${stderr}` }
}

/** Runs a command that must succeed; what it printed to stdout. */
async function succeed(command: string[], cwd: string): Promise<string> {
  const result = await run(command, cwd)
  if (result.code !== 0) throw new Error(`failed with exit code ${result.code} in ${cwd}:\n${result.output}`)
  return result.stdout
}

/**
 * The repository as git would commit it (its tracked files as they are now, and new files it does not ignore), in a
 * repository of its own with that one commit: what a clone of the commit holds, without node_modules, dist or any
 * file git ignores. Taken from the working tree, so that a change is tested before it is committed.
 */
async function snapshot(dir: string): Promise<string> {
  const listed = Bun.spawnSync(['git', 'ls-files', '-z', '--cached', '--others', '--exclude-standard'], { cwd: ROOT })
  if (listed.exitCode !== 0) throw new Error(`git ls-files failed: ${listed.stderr}`)
  for (const file of listed.stdout.toString().split('\0').filter(Boolean)) {
    const from = join(ROOT, file)
    // A tracked file deleted from the working tree is deleted from the next commit too.
    if (!existsSync(from)) continue
    mkdirSync(dirname(join(dir, file)), { recursive: true })
    copyFileSync(from, join(dir, file))
    chmodSync(join(dir, file), statSync(from).mode)
  }
  // Whoever runs it: no hooks, no signing, a name of its own.
  const git = ['git', '-c', 'user.name=rock-legends', '-c', 'user.email=rock-legends@localhost']
  const quiet = ['-c', 'core.hooksPath=/dev/null', '-c', 'commit.gpgSign=false']
  await succeed(['git', 'init', '--quiet', '--initial-branch=main'], dir)
  await succeed(['git', 'add', '--all'], dir)
  await succeed([...git, ...quiet, 'commit', '--quiet', '--message', 'the working tree'], dir)
  return (await succeed(['git', 'rev-parse', 'HEAD'], dir)).trim()
}

/**
 * Takes out of Bun's install cache what the install by git URL left there: the bare clone of the snapshot (named by a
 * hash of its URL, a temporary directory no later run asks for) and the checkout of its commit, about 7 MB a run.
 */
function forgetClone(repository: string, commit: string | undefined): void {
  const cache = Bun.spawnSync(['bun', 'pm', 'cache'], { stdout: 'pipe' }).stdout.toString().trim()
  if (!cache || !existsSync(cache)) return
  if (commit) removeDir(join(cache, `@G@${commit}`))
  for (const entry of readdirSync(cache).filter((name) => name.endsWith('.git'))) {
    const config = join(cache, entry, 'config')
    if (existsSync(config) && readFileSync(config, 'utf8').includes(`url = "file://${repository}"`))
      removeDir(join(cache, entry))
  }
}

describe.skipIf(missing !== undefined)('the repository as a dependency of a Bun project', () => {
  const { name, text } = documentedTestFile()
  let work: string
  let repository: string
  let commit: string
  let tarball: string

  beforeAll(async () => {
    work = tempDir('rock-legends-bun-dependency-')
    repository = join(work, 'rock-legends')
    mkdirSync(repository)
    commit = await snapshot(repository)
    const packed = await succeed(['bun', 'pm', 'pack', '--destination', work], repository)
    tarball = join(work, /(rock-legends-[\w.-]+\.tgz)/.exec(packed)?.[1] ?? 'rock-legends.tgz')
  }, TIMEOUT)
  afterAll(() => {
    removeDir(work)
    forgetClone(repository, commit)
  })

  /** A new project beside the clone, the package added to it as `spec` says, and the page's file in it. */
  async function projectWith(way: string, spec: string): Promise<string> {
    const project = join(work, `my-tests-${way}`)
    mkdirSync(project)
    writeFileSync(join(project, 'package.json'), `${JSON.stringify({ name: 'my-tests', private: true })}\n`)
    await succeed(['bun', 'add', spec], project)
    writeFileSync(join(project, name), text)
    return project
  }

  const ways = [
    { way: 'by path', spec: () => repository },
    { way: 'by git URL', spec: () => `git+file://${repository}#${commit}` },
    { way: 'from the tarball', spec: () => tarball },
  ]
  for (const { way, spec } of ways) {
    test(
      `added ${way}, the page's bun:test file passes`,
      async () => {
        const project = await projectWith(way.replaceAll(' ', '-'), spec())
        const installed = join(project, 'node_modules/rock-legends')
        // Installed as a user's project has it: a directory of its own under node_modules (a link to the clone would
        // load from outside node_modules, where Bun runs macros), with Scalar hoisted beside it, not inside it.
        expect(lstatSync(installed).isSymbolicLink()).toBe(false)
        expect(existsSync(join(project, 'node_modules/@scalar/api-reference/package.json'))).toBe(true)
        expect(existsSync(join(installed, 'node_modules/@scalar'))).toBe(false)

        const result = await run(['bun', 'test'], project)
        expect({ code: result.code, output: result.output }).toMatchObject({ code: 0 })
        expect(result.output).toMatch(new RegExp(`^\\s*${text.match(/^test\(/gm)?.length} pass$`, 'm'))
        expect(result.output).toMatch(/^\s*0 fail$/m)
      },
      TIMEOUT,
    )
  }

  test(
    'type-checks there with TypeScript, configured as `bun init` configures it',
    async () => {
      const project = await projectWith('types', tarball)
      // The versions the repository checks itself with; `bun init` takes the latest.
      const { devDependencies } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'))
      const tools = ['typescript', '@types/bun'].map((tool) => `${tool}@${devDependencies[tool]}`)
      await succeed(['bun', 'add', '--dev', ...tools], project)
      writeFileSync(
        join(project, 'tsconfig.json'),
        `${JSON.stringify({ compilerOptions: BUN_INIT_TSCONFIG }, null, 2)}\n`,
      )
      const result = await run(['bun', 'node_modules/typescript/bin/tsc', '--noEmit', '-p', '.'], project)
      expect({ code: result.code, output: result.output }).toEqual({ code: 0, output: expect.any(String) })
    },
    TIMEOUT,
  )

  test(
    '/docs serves Scalar’s bundle from wherever the package manager put it',
    async () => {
      const project = await projectWith('docs', tarball)
      const check = `import { startServer } from 'rock-legends'
const server = await startServer({})
const page = await (await fetch(server.url + '/docs')).text()
const bundle = await fetch(server.url + /src="(\\/docs\\/assets\\/scalar-[^"]+)"/.exec(page)[1])
console.log(JSON.stringify({ status: bundle.status, bytes: (await bundle.arrayBuffer()).byteLength }))
await server.stop()
`
      writeFileSync(join(project, 'docs-check.ts'), check)
      const output = await succeed(['bun', 'docs-check.ts'], project)
      const served = JSON.parse(output.split('\n').find((line) => line.startsWith('{')) ?? '{}')
      const file = join(project, 'node_modules/@scalar/api-reference/dist/browser/standalone.js')
      expect(served).toEqual({ status: 200, bytes: statSync(file).size })
    },
    TIMEOUT,
  )
})
