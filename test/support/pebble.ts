import { Resolver } from 'node:dns/promises'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { type Subprocess, spawn, spawnSync } from 'bun'
import { freePort, removeDir, tempDir } from './binary.ts'

/**
 * Pebble, Let's Encrypt's test CA (RFC 8555), from Debian's `pebble` package, for the ACME tests: started on loopback
 * on free ports with a configuration of the test's, and beside it `pebble-challtestsrv` (same package) as Pebble's
 * DNS server, answering every name with 127.0.0.1. Pebble then validates HTTP-01 challenges for real, by asking
 * `http://NAME:httpPort/.well-known/acme-challenge/TOKEN` on this machine. Without the package the tests skip and say
 * so, except under CI=true, where a missing package fails the run.
 */
export const PROGRAMS = { pebble: '/usr/bin/pebble', challtestsrv: '/usr/bin/pebble-challtestsrv' }

const missing = Object.values(PROGRAMS).filter((path) => !Bun.file(path).size)
if (missing.length > 0 && !Bun.which('openssl')) missing.push('openssl')
if (missing.length > 0 && process.env.CI === 'true')
  throw new Error(`the ACME tests must run in CI, but ${missing.join(', ')} is missing (apt-get install pebble)`)
if (missing.length > 0)
  console.warn(`\n!!! SKIPPING the ACME tests: ${missing.join(', ')} is not installed (apt-get install pebble)\n`)
/** Whether the ACME tests skip: Pebble is missing on a contributor's machine. */
export const skipPebble = missing.length > 0

/** How a test's Pebble behaves. */
export interface PebbleOptions {
  /** The port Pebble asks HTTP-01 challenges on: the test's challenge server listens there on 127.0.0.1. */
  httpPort: number
  /** How long the certificates it issues last, in seconds (Pebble's default is 5 years). */
  validitySeconds?: number
  /** Names it refuses to issue for (and their subdomains), with a `rejectedIdentifier` problem. */
  blocklist?: string[]
}

/** A running Pebble. */
export interface Pebble {
  /** Its ACME directory. */
  directoryUrl: string
  /** The root of its own HTTPS (a certificate made for the test): what the ACME client must trust to reach it. */
  listenerRoot: string
  /** The root its issued chains lead to, from its management port; Pebble makes a new one each time it starts. */
  issuingRoot(): Promise<string>
  /** The orders placed since it started, refused ones included (Pebble logs each `POST /order-plz`). */
  orders(): number
  /** The certificates it issued since it started. */
  issued(): number
  /** Stops Pebble (the CA is away); its DNS server stays up. */
  stop(): Promise<void>
  /** Starts it again on the same ports and configuration: a fresh CA that knows no account or order. */
  start(): Promise<void>
  /** Stops everything and removes its files. */
  close(): Promise<void>
}

/** Collects a process's output, stdout and stderr, and waits for a line. */
function watch(process: Subprocess<'ignore', 'pipe', 'pipe'>) {
  let text = ''
  const waiters: (() => void)[] = []
  const pump = async (stream: ReadableStream<Uint8Array>) => {
    const decoder = new TextDecoder()
    for await (const chunk of stream) {
      text += decoder.decode(chunk, { stream: true })
      for (const waiter of waiters.splice(0)) waiter()
    }
  }
  void pump(process.stdout)
  void pump(process.stderr)
  return {
    text: () => text,
    async until(pattern: RegExp, what: string) {
      const deadline = Date.now() + 10_000
      while (!pattern.test(text)) {
        if (process.exitCode !== null || Date.now() > deadline)
          throw new Error(`${what} did not start (exit ${process.exitCode}):\n${text}`)
        await Promise.race([new Promise<void>((resolve) => waiters.push(resolve)), Bun.sleep(100)])
      }
    },
  }
}

/** Starts a Pebble for one test (or one file's tests); {@link Pebble.close} it after. */
export async function startPebble(options: PebbleOptions): Promise<Pebble> {
  const dir = tempDir('rock-legends-pebble-')
  const made = spawnSync(
    [
      'openssl',
      'req',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:prime256v1',
      '-nodes',
      '-days',
      '2',
      '-subj',
      '/CN=pebble',
      '-addext',
      'subjectAltName=IP:127.0.0.1,DNS:localhost',
      '-keyout',
      join(dir, 'key.pem'),
      '-out',
      join(dir, 'cert.pem'),
    ],
    { stderr: 'pipe' },
  )
  if (made.exitCode !== 0) throw new Error(`openssl could not make Pebble's certificate: ${made.stderr}`)
  const listenerRoot = await Bun.file(join(dir, 'cert.pem')).text()
  // Each port is free when picked, but another test may take it before the program binds it, and both programs log
  // that they listen before they do: each start is checked by asking until it answers, and tried again on other
  // ports if it exits or never does.
  let dns: Subprocess<'ignore', 'pipe', 'pipe'> | undefined
  let dnsPort = 0
  for (let attempt = 1; !dns; attempt++) {
    dnsPort = freePort()
    const started = spawn(
      [
        PROGRAMS.challtestsrv,
        '-dns01',
        `127.0.0.1:${dnsPort}`,
        '-management',
        `127.0.0.1:${freePort()}`,
        '-http01',
        '',
        '-https01',
        '',
        '-tlsalpn01',
        '',
        '-defaultIPv6',
        '',
      ],
      { stdin: 'ignore', stdout: 'pipe', stderr: 'pipe' },
    )
    const output = watch(started)
    await output.until(/Starting management server/, 'pebble-challtestsrv')
    const resolver = new Resolver({ timeout: 500, tries: 1 })
    resolver.setServers([`127.0.0.1:${dnsPort}`])
    let answer: unknown
    for (const deadline = Date.now() + 5000; started.exitCode === null && Date.now() < deadline; await Bun.sleep(50)) {
      answer = await resolver.resolve4('probe.rock-legends.test').catch((error) => error)
      if (Array.isArray(answer)) break
    }
    if (Array.isArray(answer) && answer[0] === '127.0.0.1' && started.exitCode === null) dns = started
    else {
      started.kill()
      if (attempt === 3) throw new Error(`pebble-challtestsrv does not answer DNS (${answer}):\n${output.text()}`)
    }
  }

  let acmePort = 0
  let managementPort = 0
  const configure = () => {
    acmePort = freePort()
    managementPort = freePort()
    writeFileSync(
      join(dir, 'pebble.json'),
      JSON.stringify({
        pebble: {
          listenAddress: `127.0.0.1:${acmePort}`,
          managementListenAddress: `127.0.0.1:${managementPort}`,
          certificate: join(dir, 'cert.pem'),
          privateKey: join(dir, 'key.pem'),
          httpPort: options.httpPort,
          tlsPort: freePort(),
          ocspResponderURL: '',
          externalAccountBindingRequired: false,
          domainBlocklist: options.blocklist ?? [],
          ...(options.validitySeconds ? { certificateValidityPeriod: options.validitySeconds } : {}),
        },
      }),
    )
  }
  const directoryUrl = () => `https://127.0.0.1:${acmePort}/dir`
  /** Whether Pebble itself answers: its directory, over HTTPS with the certificate made for it. */
  const answers = async () => {
    try {
      const response = await fetch(directoryUrl(), { tls: { ca: listenerRoot } })
      const directory = (await response.json()) as { newOrder?: unknown }
      const roots = await fetch(`https://127.0.0.1:${managementPort}/roots/0`, { tls: { ca: listenerRoot } })
      return typeof directory.newOrder === 'string' && roots.ok
    } catch {
      return false
    }
  }

  let pebble: Subprocess<'ignore', 'pipe', 'pipe'> | undefined
  let output: ReturnType<typeof watch> | undefined
  const start = async (ports: 'same' | 'new') => {
    for (let attempt = 1; ; attempt++) {
      if (ports === 'new') configure()
      pebble = spawn([PROGRAMS.pebble, '-config', join(dir, 'pebble.json'), '-dnsserver', `127.0.0.1:${dnsPort}`], {
        stdin: 'ignore',
        stdout: 'pipe',
        stderr: 'pipe',
        // No random waits before validating; every nonce accepted, so that a test's count of requests is its own.
        env: { ...process.env, PEBBLE_VA_NOSLEEP: '1', PEBBLE_WFE_NONCEREJECT: '0' },
      })
      output = watch(pebble)
      await output.until(/ACME directory available at/, 'pebble')
      // It logs its address before it binds it: asked until it answers, while it runs.
      for (const deadline = Date.now() + 5000; pebble.exitCode === null && Date.now() < deadline; await Bun.sleep(50))
        if (await answers()) return
      pebble.kill()
      await pebble.exited
      if (attempt === 3) throw new Error(`pebble does not answer at ${directoryUrl()}:\n${output.text()}`)
    }
  }
  const stop = async () => {
    pebble?.kill()
    await pebble?.exited
    pebble = undefined
  }
  try {
    await start('new')
  } catch (error) {
    dns.kill()
    removeDir(dir)
    throw error
  }
  const count = (pattern: RegExp) => output?.text().match(pattern)?.length ?? 0
  return {
    directoryUrl: directoryUrl(),
    listenerRoot,
    async issuingRoot() {
      const response = await fetch(`https://127.0.0.1:${managementPort}/roots/0`, { tls: { ca: listenerRoot } })
      return response.text()
    },
    orders: () => count(/POST \/order-plz/g),
    issued: () => count(/Issued certificate serial/g),
    stop,
    start: () => start('same'),
    async close() {
      await stop()
      dns.kill()
      await dns.exited
      removeDir(dir)
    },
  }
}
