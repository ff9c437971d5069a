/**
 * `startServer` for Node (and Bun): the compiled executable as a child process, on a free port, stopped for sure.
 * Plain JavaScript over `node:child_process`; no Bun API.
 */
import { spawn } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { binaryPath } from './binary.js'
import { namespaceHandle } from './namespace.js'
import { OPTIONS } from './options.js'

/** Every server started here and not yet exited: killed when this process exits or is told to stop. */
const live = new Set()
const SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP']

function killAll() {
  for (const child of live) {
    try {
      // SIGKILL: the process is on its way out and cannot wait. The server's journal keeps every acknowledged write.
      child.kill('SIGKILL')
    } catch {}
  }
  live.clear()
}

function onSignal(signal) {
  const others = process.listenerCount(signal) > 1
  killAll()
  unhook()
  // Alone, we must not swallow the signal: die of it, as the process would have without us.
  if (!others) process.kill(process.pid, signal)
}

function hook() {
  process.on('exit', killAll)
  for (const signal of SIGNALS) process.on(signal, onSignal)
}

function unhook() {
  process.removeListener('exit', killAll)
  for (const signal of SIGNALS) process.removeListener(signal, onSignal)
}

// Settings the server reads from the environment; the options alone decide, as in-process.
const SERVER_VARIABLES = /^(PORT|HOST|ROCK_LEGENDS_.*)$/

const trimmed = (text) => text.replace(/\s+$/, '')

/** The URL of a ready line: `rock-legends listening on URL`, or with `log: 'json'` the `ready` object's `url`. */
function readyUrl(line) {
  const pretty = /^rock-legends listening on (https?:\/\/\S+)$/.exec(line)
  if (pretty) return pretty[1]
  if (!line.startsWith('{')) return undefined
  try {
    const ready = JSON.parse(line)
    return ready?.message === 'ready' && typeof ready.url === 'string' ? ready.url : undefined
  } catch {
    return undefined
  }
}

/** The URL of the first whole ready line of `stdout`, if there is one yet. */
function firstReadyUrl(stdout) {
  const lines = stdout.split('\n')
  lines.pop()
  for (const line of lines) {
    const url = readyUrl(trimmed(line))
    if (url) return url
  }
  return undefined
}

/**
 * The command line for `options`, named like the flags (see index.d.ts for each option); `apiKeys` are the service
 * keys to pass. The options without a flag go in the environment: see {@link environmentFor}.
 */
export function argumentsFor(options, apiKeys) {
  const args = []
  const given = (key) => (key === 'apiKeys' ? apiKeys : options[key])
  // The options whose default differs for a fixture come first, always given.
  const ordered = [
    ...OPTIONS.filter((option) => 'embedded' in option),
    ...OPTIONS.filter((option) => !('embedded' in option)),
  ]
  for (const { key, flag, form, embedded } of ordered) {
    const value = given(key) ?? embedded
    if (value === undefined || form === 'env') continue
    if (form === 'value') args.push(flag, String(value))
    else if (form === 'ms') args.push(flag, `${value}ms`)
    else if (form === 'list' && value.length > 0) args.push(flag, value.join(','))
    else if (form === 'each') for (const item of value) args.push(flag, item)
    else if ((form === 'on' && value === true) || (form === 'off' && value === false)) args.push(flag)
    else if (form === 'seed' && value !== false) args.push(value === true ? flag : `${flag}=${value}`)
  }
  return args
}

/** The variables for the options that have no flag (tuning knobs), added to `env`. */
export function environmentFor(options, env) {
  for (const { key, env: variable, form } of OPTIONS)
    if (form === 'env' && options[key] !== undefined) env[variable] = String(options[key])
  return env
}

/**
 * Starts the executable on a free port (by default: loopback, data in memory, seeded only if asked, no log) and
 * resolves once it serves. A start that fails rejects with the server's own error text.
 */
export function startServer(options = {}) {
  const apiKeys = options.apiKeys?.length ? [...options.apiKeys] : [`rl_fixture_${randomBytes(18).toString('hex')}`]
  const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !SERVER_VARIABLES.test(name)))
  environmentFor(options, env)
  const { readyTimeoutMs = 30_000, stopTimeoutMs = 5_000 } = options
  let child
  try {
    child = spawn(options.binary ?? binaryPath(), argumentsFor(options, apiKeys), {
      stdio: ['ignore', 'pipe', 'pipe'],
      env,
      windowsHide: true,
    })
  } catch (error) {
    return Promise.reject(error)
  }
  if (live.size === 0) hook()
  live.add(child)
  const forget = () => {
    if (live.delete(child) && live.size === 0) unhook()
  }
  // A failed spawn (no such file, not executable) emits 'error' and no 'exit'.
  child.once('error', forget)
  const exited = new Promise((resolve) =>
    child.once('exit', (code, signal) => {
      forget()
      resolve({ code, signal })
    }),
  )

  let stderr = ''
  const collect = (chunk) => {
    if (stderr.length < 65_536) stderr += chunk
  }
  child.stderr.setEncoding('utf8')
  child.stderr.on('data', collect)
  child.stdout.setEncoding('utf8')

  const ready = new Promise((resolve, reject) => {
    let stdout = ''
    const fail = (error) => {
      clearTimeout(timer)
      child.stdout.removeListener('data', onData)
      child.kill('SIGKILL')
      reject(error)
    }
    const timer = setTimeout(
      () => fail(new Error(`rock-legends was not ready within ${readyTimeoutMs} ms: ${trimmed(stderr)}`)),
      readyTimeoutMs,
    )
    const onData = (chunk) => {
      stdout += chunk
      const url = firstReadyUrl(stdout)
      if (!url) return
      clearTimeout(timer)
      child.stdout.removeListener('data', onData)
      resolve(url)
    }
    child.stdout.on('data', onData)
    child.once('error', fail)
    exited.then(async ({ code, signal }) => {
      // Let the last of stderr arrive: it holds the reason.
      await new Promise((done) => (child.stderr.readableEnded ? done() : child.stderr.once('end', done)))
      const text = trimmed(stderr) || `rock-legends exited with ${code ?? signal} before it was ready`
      fail(new Error(text))
    })
  })

  return ready.then((url) => {
    // From here on the server's output goes where this process's goes, as an in-process server's would.
    child.stderr.removeListener('data', collect)
    child.stderr.on('data', (chunk) => process.stderr.write(chunk))
    child.stdout.on('data', (chunk) => process.stdout.write(chunk))
    // A server nobody stopped must not keep the test runner alive: unreferenced, and killed when this process exits.
    child.unref()
    child.stdout.unref?.()
    child.stderr.unref?.()
    let stopping
    const stop = () => {
      stopping ??= (async () => {
        if (child.exitCode === null && child.signalCode === null) {
          child.ref()
          child.kill('SIGTERM')
          const timer = setTimeout(() => child.kill('SIGKILL'), stopTimeoutMs)
          const { code } = await exited
          clearTimeout(timer)
          if (code) throw new Error(`rock-legends stopped with exit code ${code}`)
        }
      })()
      return stopping
    }
    const reset = async () => {
      if (!options.allowReset && !options.fixtures)
        throw new Error('start the server with allowReset: true to reset it')
      const response = await fetch(`${url}/__admin/reset`, { method: 'POST', headers: { 'x-api-key': apiKeys[0] } })
      if (response.status !== 204) {
        const body = await response.text()
        let detail = body
        try {
          detail = JSON.parse(body).detail ?? body
        } catch {}
        throw new Error(`reset failed with ${response.status}: ${detail}`)
      }
    }
    const namespace = (name) => {
      if (!options.fixtures) throw new Error('start the server with fixtures: true to use namespaces')
      return namespaceHandle(url, apiKeys[0], name)
    }
    return { url, port: Number(new URL(url).port), apiKey: apiKeys[0], pid: child.pid, stop, reset, namespace }
  })
}
