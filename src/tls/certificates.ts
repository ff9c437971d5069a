import { createPrivateKey, X509Certificate } from 'node:crypto'

/** A certificate chain and its private key, in PEM, as a TLS listener serves them. */
export interface CertificatePair {
  /** The leaf certificate first, then the intermediates (never the root). */
  cert: string
  key: string
}

/**
 * Where an HTTPS server takes its certificate from: files the operator keeps (`--tls-cert`, `--tls-key`), or a CA
 * the server asks itself. The server serves {@link current} and, when told of a change, serves the new pair on new
 * connections without dropping the ones it has.
 */
export interface CertificateSource {
  /** The pair to serve now: always one that was checked and is valid. */
  current(): CertificatePair
  /** Calls `listener` each time {@link current} has become another pair. */
  onChange(listener: () => void): void
  /** Stops watching for new pairs. */
  close(): void
}

/** A certificate or key that cannot be served: the message names the file and the fix. Exit code 2 at start-up. */
export class CertificateError extends Error {
  override name = 'CertificateError'
}

/**
 * What a listener is told besides the pair. Bun 1.4.5 refuses TLS 1.0 and 1.1 by itself (it answers their hello
 * with a `protocol_version` alert) and has no option for the lowest version; what it would accept beyond modern
 * practice is TLS 1.2's CBC suites, which this list leaves out: TLS 1.2 with forward secrecy and AEAD ciphers only,
 * as Mozilla's "intermediate" profile (without its finite-field DHE), and TLS 1.3 with its own suites.
 */
export const TLS_SETTINGS = {
  ciphers: [
    'ECDHE-ECDSA-AES128-GCM-SHA256',
    'ECDHE-RSA-AES128-GCM-SHA256',
    'ECDHE-ECDSA-AES256-GCM-SHA384',
    'ECDHE-RSA-AES256-GCM-SHA384',
    'ECDHE-ECDSA-CHACHA20-POLY1305',
    'ECDHE-RSA-CHACHA20-POLY1305',
  ].join(':'),
} as const

/** What a checked pair says of itself. */
export interface PairFacts {
  /** When the certificate expires. */
  notAfter: Date
  /** The names it is for: its subject alternative names, as `DNS:example.com, IP Address:127.0.0.1`. */
  names: string
}

/** The days of validity left under which a served certificate is warned of, at start and at each reload. */
export const EXPIRY_WARNING_DAYS = 14

/**
 * Checks that `pair` can be served at `now`: a PEM certificate, a PEM private key (not encrypted), the key of that
 * certificate, and a certificate valid now. `from` names where each came from, for the messages. Throws
 * {@link CertificateError}.
 */
export function checkPair(pair: CertificatePair, from: CertificatePair, now = new Date()): PairFacts {
  let certificate: X509Certificate
  try {
    certificate = new X509Certificate(pair.cert)
  } catch {
    throw new CertificateError(`${from.cert} holds no PEM certificate ("-----BEGIN CERTIFICATE-----")`)
  }
  let key: ReturnType<typeof createPrivateKey>
  try {
    key = createPrivateKey(pair.key)
  } catch {
    throw new CertificateError(
      `${from.key} holds no PEM private key that can be read without a passphrase ("-----BEGIN PRIVATE KEY-----")`,
    )
  }
  if (!certificate.checkPrivateKey(key))
    throw new CertificateError(
      `${from.key} is not the key of the certificate in ${from.cert}: give the key the certificate was issued for`,
    )
  const notAfter = new Date(certificate.validTo)
  const notBefore = new Date(certificate.validFrom)
  if (notAfter.getTime() <= now.getTime())
    throw new CertificateError(`the certificate in ${from.cert} expired on ${notAfter.toISOString()}: renew it`)
  if (notBefore.getTime() > now.getTime())
    throw new CertificateError(
      `the certificate in ${from.cert} is not valid before ${notBefore.toISOString()}: check the clock of this machine`,
    )
  return { notAfter, names: certificate.subjectAltName ?? certificate.subject }
}

/** Days from `now` until `notAfter`, rounded down. */
export const daysLeft = (notAfter: Date, now = new Date()) =>
  Math.floor((notAfter.getTime() - now.getTime()) / 86_400_000)

/** When the certificate of `pair` expires (a pair a source serves has been checked). */
export const expiryOf = (pair: CertificatePair) => new Date(new X509Certificate(pair.cert).validTo)
