// Declares the modules of acme-client imported one by one, for every program that type-checks this file (a project
// depending on this package compiles it without the declaration file otherwise).
/// <reference path="./acme-client.d.ts" />
import { X509Certificate } from 'node:crypto'
import type { Agent } from 'node:https'
import { join } from 'node:path'
import type { Logger } from '../log.ts'
import type { AcmeError } from './acme-order.ts'
import { type CertificateStore, fileCertificateStore, type StoredCertificate } from './certificate-store.ts'
import type { CertificateSource } from './certificates.ts'
import type { HttpChallenges } from './http-challenges.ts'

/**
 * The ACME client (acme-client, axios, @peculiar/x509), loaded for an order only: a start that reuses its stored
 * certificate does without it. Loaded at every start, it took the executable's first HTTPS answer from 70 ms to 145 ms
 * (bench/https.ts, 2-core virtual machine).
 */
const acmeClient = () => import('./acme-order.ts')

/** Let's Encrypt's production directory, the default CA. */
export const LETS_ENCRYPT = 'https://acme-v02.api.letsencrypt.org/directory'
/** Let's Encrypt's staging directory: untrusted certificates, generous rate limits, for trying a setup out. */
export const LETS_ENCRYPT_STAGING = 'https://acme-staging-v02.api.letsencrypt.org/directory'

/** What happened to an order, for a counter: the first certificate, a renewal, or a renewal that failed. */
export type AcmeOutcome = 'obtained' | 'renewed' | 'failed'

/** How certificates are obtained and renewed over ACME. */
export interface AcmeOptions {
  /** The names the certificate covers; the first is its common name and names its file. */
  domains: readonly string[]
  /** The CA's ACME directory: {@link LETS_ENCRYPT} by default, {@link LETS_ENCRYPT_STAGING} to try a setup out. */
  directoryUrl?: string
  /** The contact the CA writes to about expiry and incidents; none by default. */
  email?: string
  /**
   * The directory of ACME's own files, beside the data: a subdirectory per CA (its host) holds the account key and
   * the certificates, 0700, files 0600. Ignored when `store` is given.
   */
  dir: string
  /** Where the account key and certificates live, when not in files under `dir` (a store shared by replicas). */
  store?: CertificateStore
  /** Where HTTP-01 answers go: the plain-HTTP port must answer from it before this is called. */
  challenges: HttpChallenges
  /** Roots (PEM) to trust for the CA's own HTTPS, beside none of the system's: only for a test CA such as Pebble. */
  caRoots?: string
  log: Pick<Logger, 'info' | 'warn' | 'error'>
  /** Called once per order's outcome, for the metrics. */
  count?: (outcome: AcmeOutcome) => void
  /** When in a certificate's lifetime it is renewed, from its start: two thirds by default. */
  renewAt?: number
  /**
   * The first wait after a failed renewal (doubled after each, up to `retryMaxMs`): 5 minutes by default. While the
   * certificate is valid, no wait is longer than a quarter of its time left (but at least a second).
   */
  retryFirstMs?: number
  /** The longest wait between renewal attempts: 6 hours by default. */
  retryMaxMs?: number
}

/** A certificate kept up to date over ACME: the certificate source of the HTTPS port. */
export interface AcmeCertificates extends CertificateSource {
  /** When the certificate served now expires. */
  expiresAt(): Date
  /** When the next renewal is tried. */
  renewsAt(): Date
}

/** The shortest wait before another try after a failed renewal, however close the expiry. */
const SOONEST_RETRY_MS = 1000

// Timers of more than 2^31 - 1 ms fire at once, and a renewal 60 days away is more: long waits go in steps.
const LONGEST_TIMER_MS = 24 * 60 * 60 * 1000

const caName = (directoryUrl: string) => new URL(directoryUrl).host.replace(/[^A-Za-z0-9.-]/g, '_')

/** The certificate's lifetime and names, or undefined for text that is not one. */
function describe(cert: string): { notBefore: Date; notAfter: Date; names: string[] } | undefined {
  try {
    // The first certificate of the chain: the leaf.
    const leaf = new X509Certificate(cert)
    const commonName = /(?:^|\n)CN=([^\n]*)/.exec(leaf.subject)?.[1]
    const altNames = (leaf.subjectAltName ?? '')
      .split(', ')
      .map((entry) => /^(?:DNS|IP Address):(.+)$/.exec(entry)?.[1])
    const names = [commonName, ...altNames].filter((name): name is string => !!name)
    return { notBefore: new Date(leaf.validFrom), notAfter: new Date(leaf.validTo), names }
  } catch {
    return undefined
  }
}

/**
 * Obtains a certificate for `options.domains` over ACME (RFC 8555, HTTP-01), or takes the one stored by an earlier
 * run while it is valid and covers them, and keeps it renewed for as long as it runs. A first order that fails
 * throws {@link AcmeError} naming the domains and the CA's problem; a renewal that fails is logged, counted and tried
 * again later, never stopping the certificate being served.
 */
export async function obtainCertificates(options: AcmeOptions): Promise<AcmeCertificates> {
  const directoryUrl = options.directoryUrl ?? LETS_ENCRYPT
  const store = options.store ?? fileCertificateStore(join(options.dir, caName(directoryUrl)))
  const name = options.domains[0]
  if (!name) throw new Error('ACME needs at least one domain')
  // The HTTPS agent of the requests to the CA, made with the first order.
  let agent: Agent | undefined
  const renewAt = options.renewAt ?? 2 / 3
  if (!(renewAt > 0 && renewAt < 1)) throw new Error(`renewAt must be between 0 and 1, not ${renewAt}`)
  const retryFirstMs = options.retryFirstMs ?? 5 * 60 * 1000
  const retryMaxMs = options.retryMaxMs ?? 6 * 60 * 60 * 1000
  const fields = { domains: options.domains.join(','), ca: directoryUrl }

  const usable = (stored: StoredCertificate | undefined) => {
    const about = stored && describe(stored.cert)
    if (!about || about.notAfter.getTime() <= Date.now()) return undefined
    return options.domains.every((domain) => about.names.includes(domain)) ? { stored, about } : undefined
  }

  const order = async () => {
    const { agentFor, newKey, orderCertificate } = await acmeClient()
    agent ??= agentFor(options.caRoots)
    let accountKey = await store.readAccountKey()
    if (!accountKey) {
      accountKey = await newKey()
      await store.writeAccountKey(accountKey)
    }
    const certificate = await orderCertificate({ ...options, directoryUrl, accountKey, agent })
    await store.write(name, certificate)
    return certificate
  }

  const stored = usable(await store.read(name))?.stored
  if (stored) options.log.info('ACME certificate reused', fields)
  let current: StoredCertificate =
    stored ??
    // Another user of the store (a replica) may have ordered while this one waited for it: read again first.
    (await store.exclusive(name, async () => {
      const ordered = usable(await store.read(name))?.stored
      if (ordered) return ordered
      const certificate = await order()
      options.count?.('obtained')
      options.log.info('ACME certificate obtained', fields)
      return certificate
    }))

  const listeners: (() => void)[] = []
  let about = describe(current.cert) as NonNullable<ReturnType<typeof describe>>
  let failures = 0
  let nextAt = 0
  let timer: ReturnType<typeof setTimeout> | undefined
  let closed = false

  const renewalTime = () => about.notBefore.getTime() + (about.notAfter.getTime() - about.notBefore.getTime()) * renewAt

  const schedule = (at: number) => {
    nextAt = at
    if (closed) return
    clearTimeout(timer)
    const wait = Math.max(0, at - Date.now())
    timer = setTimeout(() => (wait > LONGEST_TIMER_MS ? schedule(at) : void renew()), Math.min(wait, LONGEST_TIMER_MS))
    timer.unref?.()
  }

  const renew = async () => {
    try {
      const renewed = await store.exclusive(name, async () => {
        // A certificate another replica renewed is taken as it is.
        const stored = usable(await store.read(name))
        if (stored && stored.about.notAfter > about.notAfter) return stored.stored
        return order()
      })
      if (closed) return
      current = renewed
      about = describe(renewed.cert) as NonNullable<ReturnType<typeof describe>>
      failures = 0
      options.count?.('renewed')
      options.log.info('ACME certificate renewed', { ...fields, expires: about.notAfter.toISOString() })
      for (const listener of listeners)
        try {
          listener()
        } catch (error) {
          options.log.error('serving the renewed ACME certificate failed', error)
        }
      schedule(renewalTime())
    } catch (error) {
      if (closed) return
      failures++
      const left = about.notAfter.getTime() - Date.now()
      const expired = left <= 0
      // While the certificate is valid, tries come at least four times in what is left of it: a certificate that
      // lasts days or hours (a CA's short-lived ones) is not left to expire between two tries.
      const backoff = Math.min(
        retryFirstMs * 2 ** (failures - 1),
        retryMaxMs,
        expired ? retryMaxMs : Math.max(SOONEST_RETRY_MS, left / 4),
      )
      // An order that failed has loaded the client: its AcmeError may carry the CA's Retry-After.
      const asked =
        error instanceof (await acmeClient()).AcmeError ? ((error as AcmeError).problem?.retryAfterMs ?? 0) : 0
      const wait = Math.max(backoff, asked)
      options.count?.('failed')
      options.log.error(
        `ACME renewal failed (${failures} in a row); the ${expired ? 'EXPIRED' : 'current'} certificate, valid until ${about.notAfter.toISOString()}, is still served; next try in ${Math.round(wait / 1000)} s`,
        error,
      )
      schedule(Date.now() + wait)
    }
  }

  schedule(renewalTime())
  return {
    current: () => ({ cert: current.cert, key: current.key }),
    onChange: (listener) => void listeners.push(listener),
    close() {
      closed = true
      clearTimeout(timer)
      agent?.destroy()
    },
    expiresAt: () => about.notAfter,
    renewsAt: () => new Date(nextAt),
  }
}
