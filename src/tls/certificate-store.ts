import { chmodSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'

/** A certificate chain and its private key, both PEM. */
export interface StoredCertificate {
  cert: string
  key: string
}

/**
 * Where ACME keeps its account key and the certificates it obtained, so that a restart reuses them rather than
 * ordering again. Files now ({@link fileCertificateStore}); a store shared by replicas (rows in the SQL store, an
 * order made by the replica holding a lease row, as migrations are) implements the same methods.
 */
export interface CertificateStore {
  /** The ACME account's private key, absent before the first order. */
  readAccountKey(): Promise<string | undefined>
  writeAccountKey(pem: string): Promise<void>
  /** The certificate last stored under `name` (a domain), absent if none. */
  read(name: string): Promise<StoredCertificate | undefined>
  write(name: string, certificate: StoredCertificate): Promise<void>
  /**
   * Runs `work` while no other user of the same store orders a certificate for `name`: a store shared by replicas
   * makes the others wait, then read what the first stored.
   */
  exclusive<T>(name: string, work: () => Promise<T>): Promise<T>
}

const ACCOUNT_FILE = 'account.key.pem'

/** A file name for `name`: a domain keeps its letters, digits, dots and hyphens; anything else becomes `_`. */
const fileName = (name: string) => `${name.replace(/[^A-Za-z0-9.-]/g, '_')}.pem`

/** Writes `text` where no reader sees half of it, readable by the owner alone (0600). */
function writePrivate(file: string, text: string): void {
  const temporary = `${file}.${process.pid}.tmp`
  writeFileSync(temporary, text, { mode: 0o600 })
  chmodSync(temporary, 0o600)
  renameSync(temporary, file)
}

function readIfThere(file: string): string | undefined {
  try {
    return readFileSync(file, 'utf8')
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined
    throw error
  }
}

/**
 * A store in `dir` (made 0700 if missing): `account.key.pem`, and one `DOMAIN.pem` per certificate holding its key
 * then its chain, in one file so that a crash never leaves a key beside another key's certificate. Files are 0600.
 * One process at a time uses a directory (the data directory's lock sees to that), so `exclusive` only orders the
 * work of this process.
 */
export function fileCertificateStore(dir: string): CertificateStore {
  mkdirSync(dir, { recursive: true, mode: 0o700 })
  chmodSync(dir, 0o700)
  const running = new Map<string, Promise<unknown>>()
  return {
    readAccountKey: async () => readIfThere(join(dir, ACCOUNT_FILE)),
    writeAccountKey: async (pem) => writePrivate(join(dir, ACCOUNT_FILE), pem),
    async read(name) {
      const text = readIfThere(join(dir, fileName(name)))
      if (text === undefined) return undefined
      const key = /-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?-----END [A-Z ]*PRIVATE KEY-----\n?/.exec(text)?.[0]
      const cert = text.replace(key ?? '', '').trim()
      return key && cert ? { key: `${key.trim()}\n`, cert: `${cert}\n` } : undefined
    },
    write: async (name, { cert, key }) => writePrivate(join(dir, fileName(name)), `${key.trim()}\n${cert.trim()}\n`),
    async exclusive(name, work) {
      const before = running.get(name) ?? Promise.resolve()
      const mine = before.catch(() => {}).then(work)
      running.set(name, mine)
      try {
        return await mine
      } finally {
        if (running.get(name) === mine) running.delete(name)
      }
    },
  }
}
