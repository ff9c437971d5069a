import { type FSWatcher, readFileSync, statSync, watch } from 'node:fs'
import { dirname, resolve } from 'node:path'
import {
  CertificateError,
  type CertificatePair,
  type CertificateSource,
  checkPair,
  type PairFacts,
} from './certificates.ts'

/** What a {@link CertificateFiles} tells its server besides a change. */
export interface CertificateFileEvents {
  /** A new pair is served (its facts), after a reload. */
  loaded?(facts: PairFacts): void
  /** A reload found a pair that cannot be served: the old one is kept. */
  rejected?(error: CertificateError): void
  /** A directory that cannot be watched (SIGHUP still reloads). */
  unwatched?(dir: string, error: Error): void
}

/**
 * How long the files must stay unchanged before they are read again: a renewal writes the certificate and the key
 * one after the other (certbot swaps links, Kubernetes a directory), and the pair in between does not match.
 */
export const SETTLE_MS = 1000

const modeText = (mode: number) => (mode & 0o777).toString(8).padStart(3, '0')

/** Reads `file` for `what` (`--tls-cert`), saying which and why it cannot be read. */
function readFile(file: string, what: string): string {
  try {
    return readFileSync(file, 'utf8')
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    const why =
      code === 'ENOENT'
        ? 'no such file'
        : code === 'EACCES'
          ? 'permission denied to this user'
          : code === 'EISDIR'
            ? 'a directory, not a file'
            : (error as Error).message
    throw new CertificateError(`cannot read ${what} ${file}: ${why}`)
  }
}

/**
 * The pair in `certFile` and `keyFile`, checked: both readable, the key readable by its owner alone (as ssh refuses a
 * private key others can read), and a pair {@link checkPair} accepts. Throws {@link CertificateError}.
 */
export function readPair(certFile: string, keyFile: string, now = new Date()): CertificatePair & PairFacts {
  const cert = readFile(certFile, 'the TLS certificate (--tls-cert)')
  const key = readFile(keyFile, 'the TLS key (--tls-key)')
  // Of the file the key is read from, links followed: what others can read is the key itself.
  const { mode } = statSync(keyFile)
  if ((mode & 0o077) !== 0)
    throw new CertificateError(
      `the TLS key ${keyFile} can be read or changed by other users (mode ${modeText(mode)}): make it its owner's alone with chmod 600 ${keyFile}`,
    )
  return { cert, key, ...checkPair({ cert, key }, { cert: certFile, key: keyFile }, now) }
}

/**
 * The certificate and key of `--tls-cert` and `--tls-key`: read and checked when made (a {@link CertificateError}
 * stops the start), read again on {@link reread} (SIGHUP) and when anything in their directories changes, once the
 * files have settled. A pair that cannot be served is reported and the current one kept.
 *
 * @example
 * const files = new CertificateFiles('/etc/rock-legends/cert.pem', '/etc/rock-legends/key.pem', { rejected: log.error })
 * Bun.serve({ tls: files.current(), fetch })
 */
export class CertificateFiles implements CertificateSource {
  /** What the pair served now says of itself. */
  readonly facts: PairFacts
  private pair: CertificatePair
  private readonly listeners: (() => void)[] = []
  private readonly watchers: FSWatcher[] = []
  private settling: ReturnType<typeof setTimeout> | undefined

  constructor(
    readonly certFile: string,
    readonly keyFile: string,
    private readonly events: CertificateFileEvents = {},
    private readonly settleMs = SETTLE_MS,
  ) {
    const { cert, key, ...facts } = readPair(certFile, keyFile)
    this.pair = { cert, key }
    this.facts = facts
    // Their directories, not the files: a renewal replaces a file (or the link to it) rather than writing into it.
    for (const dir of new Set([dirname(resolve(certFile)), dirname(resolve(keyFile))]))
      try {
        this.watchers.push(watch(dir, { persistent: false }, () => this.settle()))
      } catch (error) {
        events.unwatched?.(dir, error as Error)
      }
  }

  current(): CertificatePair {
    return this.pair
  }

  onChange(listener: () => void): void {
    this.listeners.push(listener)
  }

  close(): void {
    clearTimeout(this.settling)
    for (const watcher of this.watchers) watcher.close()
  }

  /**
   * Reads the files now: true when they hold a new pair that can be served (the listeners are told), false when
   * they hold the same one or one that cannot be served (reported to `rejected`).
   */
  reread(): boolean {
    let read: CertificatePair & PairFacts
    try {
      read = readPair(this.certFile, this.keyFile)
    } catch (error) {
      if (!(error instanceof CertificateError)) throw error
      this.events.rejected?.(error)
      return false
    }
    const { cert, key, ...facts } = read
    if (cert === this.pair.cert && key === this.pair.key) return false
    this.pair = { cert, key }
    Object.assign(this.facts, facts)
    this.events.loaded?.(facts)
    for (const listener of this.listeners) listener()
    return true
  }

  /** Reads the files once nothing in their directories has changed for {@link SETTLE_MS}. */
  private settle(): void {
    clearTimeout(this.settling)
    this.settling = setTimeout(() => this.reread(), this.settleMs)
    this.settling.unref?.()
  }
}
