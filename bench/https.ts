/**
 * `bun bench/https.ts [--seconds N] [--rounds N] [--write]`: GET one artist over HTTPS (`--tls-cert`, `--tls-key`)
 * beside the same over plain HTTP, and beside a bare `Bun.serve` answering the same bytes with the same certificate
 * (and without one); then the time from spawning the executable to its first HTTPS answer, from certificate files
 * and from the certificate `--https` obtained from a Pebble on a first start and keeps, beside its first HTTP
 * answer. The certificate is an ECDSA P-256 leaf signed by a throw-away CA made by openssl, as an operator's would be
 * (Let's Encrypt issues P-256 leaves too). wrk (built with OpenSSL) keeps its 32 connections open, so a run measures
 * encryption, not handshakes. Prints Markdown; `--write` puts it into bench/RESULTS.md.
 */
import { loadavg } from 'node:os'
import { join } from 'node:path'
import { ensureBinary, removeDir, startBinary, tempDir } from '../test/support/binary.ts'
import { makeCa } from '../test/support/certificates.ts'
import { skipPebble, startPebble } from '../test/support/pebble.ts'
import { describeMachine } from './machine.ts'
import { count, machineTable, median, ms, table, utc } from './markdown.ts'
import { writeNamedSection } from './results-file.ts'
import { WRK_THREADS, wrkVersion } from './wrk.ts'

const argument = (flag: string, fallback: number) => {
  const at = process.argv.indexOf(flag)
  return at > 0 ? Number(process.argv[at + 1]) : fallback
}
const SECONDS = argument('--seconds', 5)
const ROUNDS = argument('--rounds', 3)
const STARTS = argument('--starts', 7)
const CONNECTIONS = 32
const PATH = '/api/v1/artists/1'

const wrk = wrkVersion()
if (!wrk) throw new Error('wrk is not installed: apt-get install -y wrk')
const binary = await ensureBinary()
const dir = tempDir('rock-legends-bench-https-')
const ca = makeCa(dir, 'Bench CA')
const leaf = ca.leaf('bench')
const loadBefore = loadavg()[0] as number

interface Target {
  url: string
  pid: number
  stop(): Promise<unknown>
}

const cpuSeconds = async (pid: number) => {
  const stat = await Bun.file(`/proc/${pid}/stat`).text()
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
  return (Number(fields[11]) + Number(fields[12])) / 100
}

async function rockLegends(tls: boolean): Promise<Target> {
  const args = ['--port', '0', '--data', ':memory:', '--seed', '--log', 'off']
  if (tls) args.push('--tls-cert', leaf.cert, '--tls-key', leaf.key)
  const server = await startBinary(args)
  return { url: server.url, pid: server.process.pid, stop: () => server.stop() }
}

async function bare(answerFile: string, tls: boolean): Promise<Target> {
  const command = [process.execPath, join(import.meta.dir, 'bare-tls.ts'), answerFile]
  if (tls) command.push(leaf.cert, leaf.key)
  const child = Bun.spawn(command, { stdout: 'pipe', stderr: 'inherit' })
  const reader = child.stdout.getReader()
  let text = ''
  while (!text.includes('\n')) {
    const { value, done } = await reader.read()
    if (done) throw new Error(`bench/bare-tls.ts exited: ${text}`)
    text += new TextDecoder().decode(value)
  }
  const url = /^bare listening on (\S+)$/m.exec(text)?.[1] as string
  return {
    url,
    pid: child.pid,
    stop: async () => {
      child.kill('SIGTERM')
      await child.exited
    },
  }
}

interface Run {
  rate: number
  p50: number
  p99: number
  cpuMicros: number
}

const latency = (output: string, percentile: number) => {
  const match = new RegExp(`^\\s*${percentile}%\\s+([\\d.]+)(us|ms|s)\\s*$`, 'm').exec(output)
  if (!match) throw new Error(`wrk printed no ${percentile}% latency:\n${output}`)
  return Number(match[1]) * ({ us: 0.001, ms: 1, s: 1000 }[match[2] as 'us' | 'ms' | 's'] as number)
}

async function load(target: Target, seconds: number): Promise<Run> {
  const before = await cpuSeconds(target.pid)
  const command = ['wrk', `-t${WRK_THREADS}`, `-c${CONNECTIONS}`, `-d${seconds}s`, '--latency', `${target.url}${PATH}`]
  const child = Bun.spawn(command, { stdout: 'pipe', stderr: 'pipe' })
  const output = await new Response(child.stdout).text()
  await child.exited
  if (/Non-2xx|Socket errors/.test(output)) throw new Error(`wrk saw failures against ${target.url}:\n${output}`)
  const requests = Number(/^\s*(\d+) requests in/m.exec(output)?.[1])
  const cpu = (await cpuSeconds(target.pid)) - before
  return {
    rate: Number(/^Requests\/sec:\s+([\d.]+)/m.exec(output)?.[1]),
    p50: latency(output, 50),
    p99: latency(output, 99),
    cpuMicros: (cpu * 1e6) / requests,
  }
}

type StartKind = 'https' | 'acme' | 'http'

/** A free port on loopback, for a start that must name its port. */
const freePort = () => {
  const listener = Bun.listen({ hostname: '127.0.0.1', port: 0, socket: { data() {} } })
  const free = listener.port
  listener.stop(true)
  return free
}

/**
 * The executable with `--https`, its certificate obtained once from a Pebble (Let's Encrypt's test CA) and kept in
 * `acme/`: every start after the first reuses it without asking the CA, as a restart on a VPS does.
 */
async function acmeSetUp() {
  if (skipPebble) throw new Error('pebble is not installed: apt-get install -y pebble')
  const httpPort = freePort()
  const pebble = await startPebble({ httpPort })
  const roots = join(dir, 'pebble-listener.pem')
  await Bun.write(roots, pebble.listenerRoot)
  const domain = 'bench.rock-legends.test'
  const args = (port: number) => [
    '--https',
    domain,
    '--acme-directory',
    pebble.directoryUrl,
    '--acme-dir',
    join(dir, 'acme'),
    '--http-port',
    String(httpPort),
    '--port',
    String(port),
    '--data',
    ':memory:',
    '--log',
    'off',
  ]
  const first = await startBinary(args(freePort()), { env: { NODE_EXTRA_CA_CERTS: roots } })
  await first.stop()
  if (pebble.orders() !== 1) throw new Error(`Pebble saw ${pebble.orders()} orders, not 1`)
  return { pebble, domain, args, root: await pebble.issuingRoot() }
}

/** Milliseconds from spawning the executable to its first 200 on `/healthz`, asked every 2 ms. */
async function firstAnswer(kind: StartKind, acme: Awaited<ReturnType<typeof acmeSetUp>>): Promise<number> {
  const free = freePort()
  const args = kind === 'acme' ? acme.args(free) : ['--port', String(free), '--data', ':memory:', '--log', 'off']
  if (kind === 'https') args.push('--tls-cert', leaf.cert, '--tls-key', leaf.key)
  const url = `${kind === 'http' ? 'http' : 'https'}://127.0.0.1:${free}/healthz`
  const tls = kind === 'acme' ? { ca: acme.root, serverName: acme.domain } : { ca: ca.pem }
  const spawnedAt = performance.now()
  const child = Bun.spawn([binary, ...args], { stdout: 'ignore', stderr: 'inherit' })
  try {
    for (;;) {
      const answer = await fetch(url, { tls, keepalive: false }).catch(() => undefined)
      if (answer?.status === 200) return performance.now() - spawnedAt
      if (performance.now() - spawnedAt > 10_000) throw new Error(`no answer from ${url} in 10 s`)
      await Bun.sleep(2)
    }
  } finally {
    child.kill('SIGTERM')
    await child.exited
  }
}

const labels = [
  'rock-legends over HTTPS',
  'rock-legends over HTTP',
  'bare Bun.serve over HTTPS, same certificate',
  'bare Bun.serve over HTTP',
] as const
const targets: Record<string, Target> = {}
let stopPebble: (() => Promise<void>) | undefined
try {
  targets[labels[0]] = await rockLegends(true)
  targets[labels[1]] = await rockLegends(false)
  // The bare servers answer the bytes rock-legends answers, headers included (but Date and Content-Length).
  const recorded = await fetch(`${targets[labels[1]]?.url}${PATH}`)
  const headers = Object.fromEntries(
    [...recorded.headers].filter(([name]) => !['date', 'content-length'].includes(name)),
  )
  const answerFile = join(dir, 'answer.json')
  await Bun.write(
    answerFile,
    JSON.stringify({ headers, body: Buffer.from(await recorded.arrayBuffer()).toString('base64') }),
  )
  targets[labels[2]] = await bare(answerFile, true)
  targets[labels[3]] = await bare(answerFile, false)
  for (const label of labels) await load(targets[label] as Target, 2)
  const runs: Record<string, Run[]> = Object.fromEntries(labels.map((label) => [label, []]))
  for (let round = 0; round < ROUNDS; round++)
    for (let i = 0; i < labels.length; i++) {
      const label = labels[(i + round) % labels.length] as string
      runs[label]?.push(await load(targets[label] as Target, SECONDS))
    }
  const acme = await acmeSetUp()
  stopPebble = () => acme.pebble.close()
  const starts: Record<StartKind, number[]> = { https: [], acme: [], http: [] }
  const kinds: StartKind[] = ['https', 'acme', 'http']
  // The order rotated each round, as for the loads.
  for (let i = 0; i < STARTS; i++)
    for (let k = 0; k < kinds.length; k++) {
      const kind = kinds[(k + i) % kinds.length] as StartKind
      starts[kind].push(await firstAnswer(kind, acme))
    }
  if (acme.pebble.orders() !== 1) throw new Error(`the restarts ordered again: ${acme.pebble.orders()} orders`)

  const machine = await describeMachine(wrk)
  const loadAfter = loadavg()[0] as number
  const of = (label: string, pick: (run: Run) => number) => median((runs[label] ?? []).map(pick))
  const https = of(labels[0], (run) => run.rate)
  const rows = labels.map((label) => [
    label,
    count(of(label, (run) => run.rate)),
    `${(of(label, (run) => run.rate) / https).toFixed(2)}×`,
    ms(of(label, (run) => run.p50)),
    ms(of(label, (run) => run.p99)),
    `${of(label, (run) => run.cpuMicros).toFixed(1)} µs`,
  ])
  const markdown = `## HTTPS: one artist over TLS, beside plain HTTP and a bare Bun.serve

Measured ${utc(new Date())} with \`bun bench/https.ts --seconds ${SECONDS} --rounds ${ROUNDS} --starts ${STARTS} --write\` on this machine (one-minute load average ${loadBefore.toFixed(2)} before, ${loadAfter.toFixed(2)} after: the machine is shared):

${machineTable(machine)}

\`GET ${PATH}\` (\`--data :memory: --seed --log off\`), \`wrk -t${WRK_THREADS} -c${CONNECTIONS} -d${SECONDS}s --latency\`, ${ROUNDS} rounds, the order rotated each round; medians of the rounds. TLS 1.3 (\`TLS_AES_256_GCM_SHA384\`, what wrk's OpenSSL and Bun agree on) with an ECDSA P-256 certificate; wrk keeps its connections, so this is the cost of encrypting answers, not of handshakes. The bare servers answer rock-legends' recorded bytes and headers. CPU per request is the server's user and system time over the requests wrk completed.

${table(
  [
    ['Server', 'left'],
    ['req/s', 'right'],
    ['Over rock-legends HTTPS', 'right'],
    ['p50', 'right'],
    ['p99', 'right'],
    ['CPU per request', 'right'],
  ],
  rows,
)}

Over TLS, rock-legends answers ${(https / of(labels[1], (run) => run.rate)).toFixed(2)}× its plain-HTTP rate (${(of(labels[0], (run) => run.cpuMicros) - of(labels[1], (run) => run.cpuMicros)).toFixed(1)} µs more CPU per request), the bare server ${(of(labels[2], (run) => run.rate) / of(labels[3], (run) => run.rate)).toFixed(2)}× (${(of(labels[2], (run) => run.cpuMicros) - of(labels[3], (run) => run.cpuMicros)).toFixed(1)} µs more): the encryption is Bun's${Math.abs(https / of(labels[1], (run) => run.rate) - of(labels[2], (run) => run.rate) / of(labels[3], (run) => run.rate)) < 0.1 ? ', and takes about the same share of the rate from both' : ''}. The p99 latencies move with the machine's load more than with the protocol.

From spawning the executable to its first \`200\` on \`/healthz\` (asked every 2 ms; ${STARTS} starts of each, the order rotated; the certificate read, checked and loaded at start):

${table(
  [
    ['Start', 'left'],
    ['First answer (median)', 'right'],
    ['Each start', 'left'],
  ],
  [
    ['HTTPS, `--tls-cert` files', starts.https],
    ['HTTPS, `--https` with its stored ACME certificate', starts.acme],
    ['plain HTTP', starts.http],
  ].map(([label, times]) => [label as string, ms(median(times as number[])), (times as number[]).map(ms).join(', ')]),
)}

The \`--https\` starts reuse the certificate a Pebble (Let's Encrypt's test CA, Debian's \`pebble\`) issued once before them, kept in \`--acme-dir\`: no order, no request to the CA (Pebble counted one order in all); they also listen on the plain-HTTP port (\`--http-port\`, for challenges and redirects). The ACME client's modules (acme-client, axios, @peculiar/x509) are loaded only for an order.
`
  console.log(markdown)
  if (process.argv.includes('--write')) await writeNamedSection('https', markdown)
} finally {
  await Promise.all(Object.values(targets).map((target) => target.stop()))
  await stopPebble?.()
  removeDir(dir)
}
