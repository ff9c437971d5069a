#!/usr/bin/env bun
/**
 * `bun run build:image`: the container image of the Linux x64 executable, built with podman from
 * `scripts/container/Containerfile` and saved to `dist/rock-legends-image-linux-x64.tar`, which `podman load -i` and
 * `docker load -i` read. The image is `FROM scratch` plus exactly what the executable needs: the build machine's
 * dynamic loader and the libraries `ldd` names for the executable and for its embedded argon2 module, a user, and a
 * writable /tmp. Run it on the Linux x64 (glibc) machine the release is built on; it builds
 * `dist/rock-legends-linux-x64` first when that is missing or older than its sources.
 *
 * The archive is Docker's format (`docker-archive`), not `oci-archive`: podman 4.3 writes an OCI image's config
 * without HEALTHCHECK, which the OCI image format does not have, so an image loaded from an `oci-archive` has no
 * health check. It is left uncompressed: podman 4.3 loads a compressed archive from a pipe only.
 */
import {
  chmodSync,
  copyFileSync,
  existsSync,
  linkSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs'
import { basename, dirname, join, resolve } from 'node:path'
import { argon2Package, buildTarget, nativeModuleOf, outfileOf, TARGETS } from './release.ts'

const ROOT = resolve(import.meta.dir, '..')
const DIST = join(ROOT, 'dist')
const CONTEXT = join(DIST, '.container')
const CONTAINERFILE = join(import.meta.dir, 'container/Containerfile')
const LINUX_X64 = TARGETS.find((target) => target.name === 'linux-x64') as (typeof TARGETS)[number]

/** The uid and gid the server runs as in the image (distroless's `nonroot`): not root, and no user of the host's. */
export const IMAGE_UID = 65532
/** The image's name, as podman stores it and as the archive tags it (`localhost/` is podman's name for no registry). */
export const IMAGE_NAME = 'localhost/rock-legends'
/** The archive `bun run build:image` writes. */
export const IMAGE_ARCHIVE = join(DIST, 'rock-legends-image-linux-x64.tar')

/** The tag of this version's image: `localhost/rock-legends:0.1.0`. */
export const imageTag = () => `${IMAGE_NAME}:${JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).version}`

/** What a build of the image gave. */
export interface ImageReport {
  tag: string
  /** The image's id in podman's store. */
  id: string
  /** The archive, and its size in bytes. */
  archive: string
  archiveBytes: number
  /** The files the image holds besides the executable, as paths inside it (libraries and /etc files). */
  files: string[]
}

/** How podman is run: extra environment (CONTAINERS_CONF, CONTAINERS_STORAGE_CONF) for a store of one's own. */
export interface PodmanOptions {
  env?: Record<string, string>
}

/** Runs podman to its end; its stdout, or an error with its output. */
export function podman(args: string[], { env = {} }: PodmanOptions = {}): string {
  const result = Bun.spawnSync(['podman', ...args], { env: { ...process.env, ...env }, stdout: 'pipe', stderr: 'pipe' })
  if (result.exitCode !== 0)
    throw new Error(`podman ${args.join(' ')} failed (${result.exitCode}):\n${result.stdout}${result.stderr}`.trim())
  return result.stdout.toString()
}

function newest(path: string): number {
  const stat = statSync(path)
  if (!stat.isDirectory()) return stat.mtimeMs
  return Math.max(0, ...readdirSync(path).map((name) => newest(join(path, name))))
}

/** `dist/rock-legends-linux-x64`, built first when it is missing or older than its sources. */
async function linuxExecutable(): Promise<string> {
  const file = outfileOf(LINUX_X64)
  const sources = Math.max(
    ...['src', 'data/legends.json', 'package.json', 'bun.lock'].map((p) => newest(join(ROOT, p))),
  )
  if ((statSync(file, { throwIfNoEntry: false })?.mtimeMs ?? 0) > sources) return file
  const report = await buildTarget(LINUX_X64)
  if (!report.ok) throw new Error(`cannot build ${basename(file)}: ${report.detail}`)
  return file
}

/**
 * The shared objects an ELF file loads, as `ldd` resolves them on this machine: each path the loader finds it at
 * (the dynamic loader itself included), with the file it is (a library's name is often a link).
 */
export function sharedObjects(file: string): { path: string; file: string }[] {
  const result = Bun.spawnSync(['ldd', file], { stdout: 'pipe', stderr: 'pipe' })
  const text = `${result.stdout}${result.stderr}`
  if (result.exitCode !== 0) throw new Error(`ldd ${file} failed: ${text.trim()}`)
  const found: { path: string; file: string }[] = []
  for (const line of text.split('\n')) {
    if (line.includes('not found')) throw new Error(`ldd ${file}: ${line.trim()}`)
    // `libc.so.6 => /lib/x86_64-linux-gnu/libc.so.6 (0x…)`, or the loader: `/lib64/ld-linux-x86-64.so.2 (0x…)`.
    const path = /=>\s*(\/\S+)/.exec(line)?.[1] ?? /^\s*(\/\S+)\s+\(0x/.exec(line)?.[1]
    if (path) found.push({ path, file: realpathSync(path) })
  }
  return found
}

/** Writes the build context (see the Containerfile): the base files, the volume's mount point and the executable. */
async function stageContext(executable: string): Promise<string[]> {
  rmSync(CONTEXT, { recursive: true, force: true })
  const base = join(CONTEXT, 'base')
  mkdirSync(join(base, 'etc'), { recursive: true })
  mkdirSync(join(CONTEXT, 'data'))
  const argon2 = nativeModuleOf(await argon2Package(LINUX_X64))
  const objects = new Map<string, string>()
  for (const object of [...sharedObjects(executable), ...sharedObjects(argon2)]) objects.set(object.path, object.file)
  for (const [path, file] of objects) {
    mkdirSync(join(base, dirname(path)), { recursive: true })
    copyFileSync(file, join(base, path))
  }
  // No shell: the login shell and home name nothing. root is listed so that `--user 0` has a name too.
  writeFileSync(
    join(base, 'etc/passwd'),
    `root:x:0:0:root:/root:/sbin/nologin\nrock-legends:x:${IMAGE_UID}:${IMAGE_UID}:rock-legends:/nonexistent:/sbin/nologin\n`,
  )
  writeFileSync(join(base, 'etc/group'), `root:x:0:\nrock-legends:x:${IMAGE_UID}:\n`)
  mkdirSync(join(base, 'tmp'))
  chmodSync(join(base, 'tmp'), 0o1777)
  // A hard link where it can be: the executable is over 100 MiB.
  const staged = join(CONTEXT, 'rock-legends')
  try {
    linkSync(executable, staged)
  } catch {
    copyFileSync(executable, staged)
  }
  chmodSync(staged, 0o755)
  return [...[...objects.keys()].sort(), '/etc/group', '/etc/passwd']
}

/** Records the archive's SHA-256 in `dist/SHA256SUMS` beside the executables', replacing an older line for it. */
async function recordChecksum(archive: string) {
  const sums = join(DIST, 'SHA256SUMS')
  const name = basename(archive)
  const hasher = new Bun.CryptoHasher('sha256')
  for await (const chunk of Bun.file(archive).stream()) hasher.update(chunk)
  const lines = (existsSync(sums) ? readFileSync(sums, 'utf8') : '')
    .split('\n')
    .filter((line) => line !== '' && !line.endsWith(`  ${name}`))
  writeFileSync(sums, `${[...lines, `${hasher.digest('hex')}  ${name}`].join('\n')}\n`)
}

/** Builds the image into podman's store, tagged {@link imageTag}, and saves it to {@link IMAGE_ARCHIVE}. */
export async function buildImage(options: PodmanOptions = {}): Promise<ImageReport> {
  if (process.platform !== 'linux' || process.arch !== 'x64')
    throw new Error(`the image is built on Linux x64, from its libraries; this is ${process.platform}-${process.arch}`)
  const executable = await linuxExecutable()
  const files = await stageContext(executable)
  const tag = imageTag()
  const version = tag.slice(tag.lastIndexOf(':') + 1)
  try {
    podman(
      ['build', '--format', 'docker', '--build-arg', `VERSION=${version}`, '-f', CONTAINERFILE, '-t', tag, CONTEXT],
      options,
    )
  } finally {
    rmSync(CONTEXT, { recursive: true, force: true })
  }
  const id = podman(['image', 'inspect', '--format', '{{.Id}}', tag], options).trim()
  rmSync(IMAGE_ARCHIVE, { force: true })
  podman(['save', '--format', 'docker-archive', '-o', IMAGE_ARCHIVE, tag], options)
  await recordChecksum(IMAGE_ARCHIVE)
  return { tag, id, archive: IMAGE_ARCHIVE, archiveBytes: statSync(IMAGE_ARCHIVE).size, files }
}

if (import.meta.main) {
  try {
    const report = await buildImage()
    const mib = (report.archiveBytes / 1024 / 1024).toFixed(1)
    process.stdout.write(
      `built ${report.tag} (${report.id.slice(0, 12)}): the executable and ${report.files.join(', ')}\n` +
        `saved ${report.archive.slice(ROOT.length + 1)}, ${mib} MiB: podman load -i (or docker load -i) it elsewhere\n`,
    )
  } catch (error) {
    process.stderr.write(`${(error as Error).message}\n`)
    process.exit(1)
  }
}
