import { existsSync, mkdirSync, writeFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { type Subprocess, spawn } from 'bun'
import { freePort } from '../support/binary.ts'

/**
 * A real Prometheus and its `promtool`, from Debian's `prometheus` package (which .ci/run installs): the alert rules
 * of docs/prometheus/ are checked and unit-tested by `promtool`, and loaded by a Prometheus that scrapes the
 * executable. Without the package the tests that need it skip, saying so, except under `CI=true`, where they fail.
 */

export const PROMTOOL = '/usr/bin/promtool'
export const PROMETHEUS = '/usr/bin/prometheus'

/** The rules and their unit tests, as the repository ships them. */
export const RULES_DIR = resolve(import.meta.dir, '../../docs/prometheus')
export const RULES = join(RULES_DIR, 'rock-legends-alerts.yml')
export const RULE_TESTS = join(RULES_DIR, 'rock-legends-alerts.test.yml')

/** Under CI the package must be there: throws there when it is not; elsewhere returns whether to skip, saying why. */
export function skipWithoutPrometheus(what: string): boolean {
  const missing = [PROMTOOL, PROMETHEUS].filter((path) => !existsSync(path))
  if (missing.length === 0) return false
  const why = `${missing.join(' and ')} ${missing.length > 1 ? 'are' : 'is'} not installed (apt-get install -y prometheus)`
  if (process.env.CI === 'true') throw new Error(`${what} must run in CI, but ${why}`)
  console.warn(`\n!!! SKIPPING ${what}: ${why}. In CI this fails.\n`)
  return true
}

/** Runs `promtool` with `args`; its exit code and its output, stdout then stderr. */
export function promtool(args: string[], cwd = RULES_DIR) {
  const result = Bun.spawnSync([PROMTOOL, ...args], { cwd, stdout: 'pipe', stderr: 'pipe' })
  return { code: result.exitCode, output: `${result.stdout.toString()}${result.stderr.toString()}` }
}

/** A Prometheus started by {@link startPrometheus}. */
export interface RunningPrometheus {
  /** Its base URL, e.g. `http://127.0.0.1:41234`. */
  url: string
  /** The `data` of a query of its HTTP API (`/api/v1/…`); throws when the API answers an error. */
  api<T>(path: string, query?: Record<string, string>): Promise<T>
  /** Stops it and resolves with what it logged. */
  stop(): Promise<string>
}

/**
 * Starts Prometheus on a free loopback port with `config` (a prometheus.yml) in `dir`, its storage there too, and
 * waits until it is ready.
 */
export async function startPrometheus(dir: string, config: string): Promise<RunningPrometheus> {
  const file = join(dir, 'prometheus.yml')
  writeFileSync(file, config)
  const storage = join(dir, 'tsdb')
  mkdirSync(storage)
  const url = `http://127.0.0.1:${freePort()}`
  const child: Subprocess<'ignore', 'pipe', 'pipe'> = spawn(
    [
      PROMETHEUS,
      `--config.file=${file}`,
      `--storage.tsdb.path=${storage}`,
      `--web.listen-address=${url.slice('http://'.length)}`,
    ],
    { cwd: dir, stdin: 'ignore', stdout: 'pipe', stderr: 'pipe' },
  )
  const log = new Response(child.stderr).text()
  const deadline = Date.now() + 30_000
  for (;;) {
    if (child.exitCode !== null) throw new Error(`prometheus exited with ${child.exitCode}: ${await log}`)
    const ready = await fetch(`${url}/-/ready`).catch(() => undefined)
    if (ready?.status === 200) break
    if (Date.now() > deadline) {
      child.kill()
      throw new Error(`prometheus was not ready within 30 s: ${await log}`)
    }
    await Bun.sleep(100)
  }
  return {
    url,
    async api<T>(path: string, query: Record<string, string> = {}): Promise<T> {
      const response = await fetch(`${url}/api/v1/${path}?${new URLSearchParams(query)}`)
      const body = (await response.json()) as { status: string; data: T; error?: string }
      if (body.status !== 'success') throw new Error(`${path}: ${body.error ?? response.status}`)
      return body.data
    },
    async stop() {
      child.kill()
      await child.exited
      return log
    },
  }
}
