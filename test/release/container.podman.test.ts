import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { existsSync, readFileSync, writeFileSync } from 'node:fs'
import { join, relative, resolve } from 'node:path'
import { buildImage, IMAGE_ARCHIVE, IMAGE_UID, type ImageReport, imageTag, podman } from '../../scripts/container.ts'
import { SERVER_OPTIONS } from '../../src/options.ts'
import { freePort, removeDir, tempDir } from '../support/binary.ts'

// The container image as the release makes it (`bun run build:image`, scripts/container.ts), loaded back from its
// archive and run with podman as docs/operations.md and docs/testing-with-rock-legends.md show: their commands are
// read from the pages and run as written, but for the published port (a free one). Every check goes through that
// port, or looks at the process from the host. Podman keeps everything in a store of this test's own
// (CONTAINERS_STORAGE_CONF), removed at the end, with a containers.conf this machine needs (see docs/releases.md).
// Needs podman, runc and iptables (podman's bridge network publishes ports through it) from Debian, and root; without
// them the tests skip and say so, except under CI=true, where they fail.
const ROOT = resolve(import.meta.dir, '../..')
const PROGRAMS = ['/usr/bin/podman', '/usr/sbin/runc', '/usr/sbin/iptables']
const missing = PROGRAMS.filter((path) => !existsSync(path))
const skipReason =
  missing.length > 0
    ? `${missing.join(', ')} is missing (apt-get install podman runc iptables)`
    : process.getuid?.() !== 0
      ? 'they run as root only (podman’s bridge network, the volume owned by the image’s user)'
      : undefined
if (skipReason && process.env.CI === 'true')
  throw new Error(`the container image tests must run in CI, but ${skipReason}`)
if (skipReason) console.warn(`\n!!! SKIPPING the container image tests: ${skipReason}\n`)

const OPERATIONS = readFileSync(join(ROOT, 'docs/operations.md'), 'utf8')
const TESTING = readFileSync(join(ROOT, 'docs/testing-with-rock-legends.md'), 'utf8')
const CONTAINERFILE = readFileSync(join(ROOT, 'scripts/container/Containerfile'), 'utf8')

/** The fenced blocks of a page written in `language`, in order. */
const fenced = (page: string, language: string) =>
  [...page.matchAll(new RegExp(`^\`\`\`${language}\\n([\\s\\S]*?)^\`\`\`$`, 'gm'))].map((match) => match[1] as string)

/** The words of the first command of a page's shell blocks that begins with `start`: lines joined, comments cut. */
function documented(page: string, start: string): string[] {
  const commands = fenced(page, 'sh').flatMap((block) =>
    block
      .replace(/\\\n\s*/g, ' ')
      .split('\n')
      .map((line) => line.replace(/\s+#.*$/, '').trim()),
  )
  const command = commands.find((line) => line.startsWith(`${start} `))
  if (!command) throw new Error(`no \`${start} …\` in the page`)
  return command.split(/\s+/)
}

/** The variables a `podman run` sets with `-e NAME=VALUE`. */
const variablesOf = (run: string[]) =>
  Object.fromEntries(
    run.flatMap((word, i) =>
      run[i - 1] === '-e' ? [[word.slice(0, word.indexOf('=')), word.slice(word.indexOf('=') + 1)]] : [],
    ),
  )

/** A documented `podman run` publishing the container's port 3000 on `port` of loopback instead of 3000. */
const onPort = (run: string[], port: number) =>
  run.map((word) => (word === '127.0.0.1:3000:3000' ? `127.0.0.1:${port}:3000` : word))

type Variables = Record<string, string>
/** What the test reads of the docs' GitHub Actions workflow, GitLab pipeline and Compose file. */
interface GithubWorkflow {
  jobs: { test: { services: Record<string, { image: string; ports: string[]; env: Variables }> } }
}
interface GitlabPipeline {
  test: { services: { name: string; alias: string; variables: Variables }[]; variables: Variables }
}
interface ComposeFile {
  services: Record<string, { image: string; ports: string[]; environment: Variables }>
}

describe('the image’s documentation', () => {
  test('the CI examples give the service the image, the variables and the port of the `podman run` shown', () => {
    const run = documented(TESTING, 'podman run')
    const variables = variablesOf(run)
    expect(Object.keys(variables).length).toBeGreaterThan(0)
    const declared = new Set<string>(Object.values(SERVER_OPTIONS).map((option) => ('env' in option ? option.env : '')))
    for (const name of Object.keys(variables)) expect(declared.has(name) ? name : `${name}, no option's`).toBe(name)
    const [github, gitlab, compose] = fenced(TESTING, 'yaml').map((text) => Bun.YAML.parse(text)) as [
      GithubWorkflow,
      GitlabPipeline,
      ComposeFile,
    ]
    const version = imageTag().slice(imageTag().lastIndexOf(':'))
    const service = github.jobs.test.services['rock-legends'] as GithubWorkflow['jobs']['test']['services'][string]
    expect(service.env).toEqual(variables)
    expect(service.image.endsWith(`/rock-legends${version}`)).toBe(true)
    expect(service.ports).toEqual(['3000:3000'])
    const gitlabService = gitlab.test.services[0] as GitlabPipeline['test']['services'][number]
    expect(gitlabService.variables).toEqual(variables)
    expect(gitlabService.name.endsWith(`/rock-legends${version}`)).toBe(true)
    expect(gitlab.test.variables.API_URL).toBe(`http://${gitlabService.alias}:3000`)
    expect(compose.services['rock-legends']).toMatchObject({
      image: imageTag(),
      environment: variables,
      ports: ['127.0.0.1:3000:3000'],
    })
    const testcontainers = fenced(TESTING, 'ts').find((block) => block.includes('GenericContainer')) as string
    expect(testcontainers).toContain(`new GenericContainer('${imageTag()}')`)
    for (const [name, value] of Object.entries(variables)) expect(testcontainers).toContain(`${name}: '${value}',`)
    expect(run.at(-1)).toBe(imageTag())
    expect(documented(OPERATIONS, 'podman run').at(-1)).toBe(imageTag())
  })

  test('docs/operations.md shows the image’s own HEALTHCHECK', () => {
    const line = /^HEALTHCHECK .*$/m.exec(CONTAINERFILE)?.[0]
    expect(fenced(OPERATIONS, 'dockerfile')).toContain(`${line}\n`)
  })
})

describe.skipIf(skipReason !== undefined)('the container image (podman)', () => {
  let dir: string
  let env: Record<string, string>
  let report: ImageReport

  /** Runs podman to its end: its exit code and output, never throwing. */
  const attempt = (words: string[]) => {
    const result = Bun.spawnSync(words, { cwd: ROOT, env: { ...process.env, ...env }, stdout: 'pipe', stderr: 'pipe' })
    return { code: result.exitCode, output: `${result.stdout}${result.stderr}` }
  }

  /** Starts a documented `podman run -d`, and resolves once the server answers `/healthz` on `port`. */
  async function start(run: string[], port: number) {
    const started = attempt(run)
    if (started.code !== 0) throw new Error(`${run.join(' ')} failed (${started.code}): ${started.output}`)
    const name = run[run.indexOf('--name') + 1] as string
    const deadline = Date.now() + 30_000
    while (Date.now() < deadline) {
      const status = await fetch(`http://127.0.0.1:${port}/healthz`).then(
        (response) => response.status,
        () => 0,
      )
      if (status === 200) return
      await Bun.sleep(50)
    }
    throw new Error(`${name} did not answer /healthz within 30 s:\n${attempt(['podman', 'logs', name]).output}`)
  }

  /** The real, effective, saved and file-system ids of the container's process, read on the host. */
  const idsOf = (name: string) => {
    const pid = podman(['inspect', '--format', '{{.State.Pid}}', name], { env }).trim()
    const status = readFileSync(`/proc/${pid}/status`, 'utf8')
    return {
      uid: /^Uid:\s+(.*)$/m.exec(status)?.[1]?.split(/\s+/),
      gid: /^Gid:\s+(.*)$/m.exec(status)?.[1]?.split(/\s+/),
    }
  }

  const exitCodeOf = (name: string) => podman(['inspect', '--format', '{{.State.ExitCode}}', name], { env }).trim()

  beforeAll(async () => {
    dir = tempDir('rock-legends-podman-')
    writeFileSync(
      join(dir, 'containers.conf'),
      `[containers]\ndefault_ulimits = []\n\n[engine]\nruntime = "runc"\ntmp_dir = "${join(dir, 'tmp')}"\n`,
    )
    writeFileSync(
      join(dir, 'storage.conf'),
      `[storage]\ndriver = "overlay"\ngraphroot = "${join(dir, 'root')}"\nrunroot = "${join(dir, 'run')}"\n`,
    )
    env = { CONTAINERS_CONF: join(dir, 'containers.conf'), CONTAINERS_STORAGE_CONF: join(dir, 'storage.conf') }
    report = await buildImage({ env })
    // What a user gets is the archive: the image leaves the store and comes back from it, as the docs load it.
    podman(['rmi', report.tag], { env })
    const load = documented(OPERATIONS, 'podman load')
    expect(load).toEqual(['podman', 'load', '-i', relative(ROOT, IMAGE_ARCHIVE)])
    const loaded = attempt(load)
    if (loaded.code !== 0) throw new Error(`${load.join(' ')} failed: ${loaded.output}`)
  }, 300_000)

  afterAll(() => {
    if (!dir) return
    for (const args of [
      ['rm', '--all', '--force', '--time', '0'],
      ['volume', 'rm', '--all', '--force'],
      ['rmi', '--all', '--force'],
    ])
      attempt(['podman', ...args])
    // The overlay driver mounts its own directory (private); what podman leaves mounted here is this test's.
    const mounts = readFileSync('/proc/mounts', 'utf8')
      .split('\n')
      .map((line) => line.split(' ')[1] ?? '')
      .filter((path) => path.startsWith(`${dir}/`))
      .sort((a, b) => b.length - a.length)
    for (const path of mounts) Bun.spawnSync(['umount', path])
    removeDir(dir)
  }, 60_000)

  test('the archive: the executable, its loader and libraries, a user and /tmp, and the configuration', () => {
    const tar = (args: string[], stdin?: Uint8Array) => {
      const result = Bun.spawnSync(['tar', ...args], { stdin, stdout: 'pipe', stderr: 'pipe' })
      if (result.exitCode !== 0) throw new Error(`tar ${args.join(' ')}: ${result.stderr}`)
      return result.stdout
    }
    const manifest = JSON.parse(tar(['-xOf', IMAGE_ARCHIVE, 'manifest.json']).toString())[0]
    expect(manifest.RepoTags).toEqual([report.tag])
    const entries = (manifest.Layers as string[]).flatMap((layer) =>
      tar(['-tv', '--numeric-owner', '-f', '-'], tar(['-xOf', IMAGE_ARCHIVE, layer]))
        .toString()
        .trim()
        .split('\n')
        .map((line) => {
          const [mode, owner, , , , ...path] = line.split(/\s+/)
          return { mode: mode as string, owner: owner as string, path: `/${path.join(' ').replace(/\/$/, '')}` }
        }),
    )
    const files = entries.filter((entry) => !entry.mode.startsWith('d'))
    expect(files.every((entry) => entry.mode.startsWith('-'))).toBe(true) // no links, no devices
    expect(files.map((entry) => entry.path).sort()).toEqual([...report.files, '/usr/local/bin/rock-legends'].sort())
    const names = report.files.map((path) => path.slice(path.lastIndexOf('/') + 1))
    // The loader, glibc, and what the argon2 module loads besides (ldd of the executable alone misses these two).
    for (const name of ['ld-linux-x86-64.so.2', 'libc.so.6', 'libgcc_s.so.1', 'librt.so.1'])
      expect(names).toContain(name)
    const directory = (path: string) => entries.find((entry) => entry.path === path)
    expect(directory('/tmp')).toMatchObject({ mode: 'drwxrwxrwt', owner: '0/0' })
    expect(directory('/data')).toMatchObject({ owner: `${IMAGE_UID}/${IMAGE_UID}` })

    const config = JSON.parse(tar(['-xOf', IMAGE_ARCHIVE, manifest.Config]).toString()).config
    expect(config).toMatchObject({
      User: `${IMAGE_UID}:${IMAGE_UID}`,
      Entrypoint: ['/usr/local/bin/rock-legends'],
      WorkingDir: '/data',
      Volumes: { '/data': {} },
      ExposedPorts: { '3000/tcp': {} },
      StopSignal: 'SIGTERM',
      Healthcheck: { Test: ['CMD', '/usr/local/bin/rock-legends', 'healthcheck'] },
    })
    expect(config.Cmd ?? []).toEqual([])
    expect(config.Env).toEqual(['PATH=/usr/local/bin', 'HOST=0.0.0.0', 'PORT=3000', 'ROCK_LEGENDS_DATA=/data/db.json'])
    // Loaded back from the archive, it is the image that was built.
    expect(podman(['image', 'inspect', '--format', '{{.Id}}', report.tag], { env }).trim()).toBe(report.id)
  })

  test('as docs/operations.md runs it: an empty store that keeps what it is given, as uid 65532, over restarts', async () => {
    const port = freePort()
    const run = onPort(documented(OPERATIONS, 'podman run'), port)
    const name = run[run.indexOf('--name') + 1] as string
    const key = variablesOf(run).ROCK_LEGENDS_API_KEYS as string
    const api = `http://127.0.0.1:${port}/api/v1`
    const json = { 'Content-Type': 'application/json' }
    const total = async () => ((await (await fetch(`${api}/artists`)).json()) as { meta: { total: number } }).meta.total
    const account = { name: 'Ana', email: 'ana@example.com', password: 'i-love-rock' }
    const logIn = () =>
      fetch(`${api}/user/login`, {
        method: 'POST',
        headers: json,
        body: JSON.stringify({ email: account.email, password: account.password }),
      }).then((response) => response.status)

    await start(run, port)
    expect(await total()).toBe(0) // no seed unless asked
    const created = await fetch(`${api}/artists`, {
      method: 'POST',
      headers: { ...json, 'X-API-Key': key },
      body: JSON.stringify({ name: 'Pappo', band: 'Riff' }),
    })
    expect(created.status).toBe(201)
    const pappo = (await created.json()) as { id: number }
    expect(await (await fetch(`${api}/artists/${pappo.id}`)).json()).toEqual(pappo)
    // A password hash: the argon2 module is written to the image's /tmp and loaded from there.
    const signUp = await fetch(`${api}/user/signup`, { method: 'POST', headers: json, body: JSON.stringify(account) })
    expect(signUp.status).toBe(201)
    expect(await logIn()).toBe(200)

    const all = String(IMAGE_UID)
    expect(idsOf(name)).toEqual({ uid: [all, all, all, all], gid: [all, all, all, all] })
    const health = attempt(documented(OPERATIONS, 'podman healthcheck run'))
    expect(`${health.code} ${health.output}`).toStartWith('0 ')
    const users = attempt(documented(OPERATIONS, 'podman exec'))
    expect(users.code).toBe(0)
    expect(users.output).toContain(account.email)

    // SIGTERM: the server drains, flushes and exits 0 (a SIGKILL, podman's after 10 s, would make it 137).
    expect(attempt(documented(OPERATIONS, 'podman stop')).code).toBe(0)
    expect(exitCodeOf(name)).toBe('0')
    podman(['rm', name], { env })

    // A new container over the same volume, with --seed after the image name: the written store is kept as it is.
    await start([...run, '--seed'], port)
    expect(await total()).toBe(1)
    expect(await (await fetch(`${api}/artists/${pappo.id}`)).json()).toEqual(pappo)
    expect(await logIn()).toBe(200)

    // Killed outright, it leaves its lock file in the volume; the next container starts all the same.
    podman(['kill', name], { env })
    podman(['rm', name], { env })
    await start(run, port)
    expect(await total()).toBe(1)
    expect(await logIn()).toBe(200)
    expect(attempt(documented(OPERATIONS, 'podman stop')).code).toBe(0)
    expect(exitCodeOf(name)).toBe('0')
  }, 120_000)

  test('as the CI service of docs/testing-with-rock-legends.md: the legends in memory, a key, a reset', async () => {
    const port = freePort()
    const run = onPort(documented(TESTING, 'podman run'), port)
    const name = run[run.indexOf('--name') + 1] as string
    const key = variablesOf(run).ROCK_LEGENDS_API_KEYS as string
    const base = `http://127.0.0.1:${port}`
    const total = async () =>
      ((await (await fetch(`${base}/api/v1/artists`)).json()) as { meta: { total: number } }).meta.total

    await start(run, port)
    expect(await total()).toBe(32)
    const created = await fetch(`${base}/api/v1/artists`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', 'X-API-Key': key },
      body: JSON.stringify({ name: 'Pappo' }),
    })
    expect(await created.json()).toEqual({ id: 33, name: 'Pappo' })
    expect(await total()).toBe(33)
    const reset = await fetch(`${base}/__admin/reset`, { method: 'POST', headers: { 'X-API-Key': key } })
    expect(reset.status).toBe(204)
    expect(await total()).toBe(32)
    expect(attempt(['podman', 'healthcheck', 'run', name]).code).toBe(0)
    expect(attempt(['podman', 'stop', name]).code).toBe(0)
    expect(exitCodeOf(name)).toBe('0')
  }, 60_000)
})
