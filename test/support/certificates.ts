import { chmodSync, copyFileSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { connect } from 'node:tls'

// Certificates made by the `openssl` command, as an operator makes them: a throw-away CA and a leaf for localhost and
// 127.0.0.1 signed by it, which clients trust by passing the CA (`fetch(url, { tls: { ca } })`).

const OPENSSL = Bun.which('openssl')
if (!OPENSSL && process.env.CI === 'true') throw new Error('the TLS tests must run in CI: apt-get install openssl')
/** Whether the `openssl` command is missing (and the TLS tests skip, except under CI=true). */
export const opensslMissing = OPENSSL === null
if (opensslMissing) console.warn('\n!!! SKIPPING the TLS tests: the openssl command is not installed\n')

function openssl(args: string[], cwd: string): void {
  const result = Bun.spawnSync([OPENSSL as string, ...args], { cwd, stdout: 'pipe', stderr: 'pipe' })
  if (result.exitCode !== 0) throw new Error(`openssl ${args.join(' ')}: ${result.stderr.toString()}`)
}

/** A CA of a test: its certificate (PEM text, to trust) and where its files are. */
export interface TestCa {
  dir: string
  /** The CA's certificate in PEM. */
  pem: string
  /** Signs a new leaf (see {@link makeLeaf}). */
  leaf(name: string, options?: LeafOptions): TestLeaf
}

/** A leaf certificate and its key, in files. */
export interface TestLeaf {
  cert: string
  key: string
  /** The certificate's serial number, as openssl prints it (upper-case hex). */
  serial: string
}

let placedLeaves = 0

/** A copy of `leaf` in `dir`, at paths of its own (the key `0600`, as the server asks), which a test may overwrite. */
export function placeLeaf(dir: string, leaf: TestLeaf): { cert: string; key: string } {
  const at = { cert: join(dir, `served-${++placedLeaves}.pem`), key: join(dir, `served-${placedLeaves}.key`) }
  copyFileSync(leaf.cert, at.cert)
  copyFileSync(leaf.key, at.key)
  chmodSync(at.key, 0o600)
  return at
}

export interface LeafOptions {
  /** Days of validity: 0 for a certificate already expired. 30 by default. */
  days?: number
}

/**
 * Makes a CA in `dir` (named `label` in its subject), to sign leaves for localhost and 127.0.0.1; without openssl, a
 * CA that cannot sign (the tests that would use it skip).
 */
export function makeCa(dir: string, label = 'Rock Legends Test CA'): TestCa {
  if (opensslMissing)
    return {
      dir,
      pem: '',
      leaf: () => {
        throw new Error('openssl is not installed')
      },
    }
  const prefix = label.replaceAll(/\W+/g, '-')
  const key = `${prefix}.key`
  const cert = `${prefix}.pem`
  openssl(
    [
      'req',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:P-256',
      '-nodes',
      '-keyout',
      key,
      '-out',
      cert,
    ].concat(['-days', '30', '-subj', `/CN=${label}`]),
    dir,
  )
  return {
    dir,
    pem: readFileSync(join(dir, cert), 'utf8'),
    leaf: (name, options) => makeLeaf(dir, { key, cert }, name, options),
  }
}

let serials = 0

/** Signs a leaf `name` (files `name.pem`, `name.key`, the key 0600) for localhost and 127.0.0.1 with the CA's key. */
function makeLeaf(dir: string, ca: { key: string; cert: string }, name: string, { days = 30 }: LeafOptions = {}) {
  const ext = join(dir, `${name}.ext`)
  writeFileSync(
    ext,
    'subjectAltName=DNS:localhost,IP:127.0.0.1\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n',
  )
  const serial = (0x1000 + ++serials).toString(16).toUpperCase()
  const [key, csr, cert] = [`${name}.key`, `${name}.csr`, `${name}.pem`]
  openssl(
    ['req', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-keyout', key, '-out', csr].concat([
      '-subj',
      '/CN=localhost',
    ]),
    dir,
  )
  openssl(
    ['x509', '-req', '-in', csr, '-CA', ca.cert, '-CAkey', ca.key, '-out', cert, '-days', String(days)].concat([
      '-set_serial',
      `0x${serial}`,
      '-extfile',
      ext,
    ]),
    dir,
  )
  chmodSync(join(dir, key), 0o600)
  return { cert: join(dir, cert), key: join(dir, key), serial }
}

/** A TLS connection kept open to a server, to send HTTP/1.1 requests on one after the other. */
export interface KeptConnection {
  /** The serial number of the certificate the server presented, upper-case hex. */
  serial: string
  /** Sends `GET path` and resolves with the whole answer, head and body, as text. */
  get(path: string): Promise<string>
  /** Resolves once the server has closed the connection. */
  closed: Promise<void>
  close(): void
}

/** Opens a TLS connection to `url` (https://host:port) trusting `ca` alone, for `localhost`. */
export async function keepConnection(url: string, ca: string): Promise<KeptConnection> {
  const { port, hostname } = new URL(url)
  const socket = connect({ host: hostname, port: Number(port), ca, servername: 'localhost' })
  await new Promise<void>((resolve, reject) => {
    socket.once('secureConnect', resolve)
    socket.once('error', reject)
  })
  const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()))
  let buffer = ''
  let waiting: (() => void) | undefined
  socket.on('data', (chunk: Buffer) => {
    buffer += chunk.toString('latin1')
    waiting?.()
  })
  const answered = () => {
    const end = buffer.indexOf('\r\n\r\n')
    if (end < 0) return undefined
    const length = Number(/\r\ncontent-length: *(\d+)/i.exec(buffer.slice(0, end))?.[1] ?? 0)
    if (buffer.length < end + 4 + length) return undefined
    const answer = buffer.slice(0, end + 4 + length)
    buffer = buffer.slice(end + 4 + length)
    return answer
  }
  return {
    serial: socket.getPeerCertificate().serialNumber.toUpperCase(),
    get(path) {
      socket.write(`GET ${path} HTTP/1.1\r\nHost: localhost\r\n\r\n`)
      return new Promise((resolve, reject) => {
        const check = () => {
          const answer = answered()
          if (answer !== undefined) {
            waiting = undefined
            resolve(answer)
          }
        }
        waiting = check
        socket.once('close', () => reject(new Error(`the connection closed before answering GET ${path}`)))
        check()
      })
    },
    closed,
    close: () => socket.destroy(),
  }
}

/** The serial number of the certificate a new connection to `url` is served. */
export async function servedSerial(url: string, ca: string): Promise<string> {
  const connection = await keepConnection(url, ca)
  connection.close()
  return connection.serial
}
