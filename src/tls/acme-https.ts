import { mkdirSync } from 'node:fs'
import { dirname, join } from 'node:path'
import type { Server } from 'bun'
import type { Logger } from '../log.ts'
import { IN_MEMORY, isDatabaseUrl } from '../store/target.ts'
import { type AcmeCertificates, type AcmeOutcome, obtainCertificates } from './acme.ts'
import { HttpChallenges } from './http-challenges.ts'
import { PortError } from './port-error.ts'

/** What `--https` needs to obtain its certificates and listen on the plain-HTTP port. */
export interface AcmeHttpsOptions {
  domains: readonly string[]
  directoryUrl: string
  email?: string
  /** Roots (PEM) of a test CA's own HTTPS. */
  caRoots?: string
  /** `--acme-dir`, else `acme` beside the data file. */
  acmeDir?: string
  data: string
  host: string
  httpPort: number
  log: Logger
  count: (outcome: AcmeOutcome) => void
}

/** Certificates kept over ACME, and the plain-HTTP listener that answers the CA and redirects everyone else. */
export interface AcmeHttps {
  certificates: AcmeCertificates
  /** The plain-HTTP listener; stopped with the server. */
  http: Server<undefined>
  /** The HTTPS port, once it listens: until then the plain-HTTP port answers 503 rather than redirect. */
  servesOn(port: number): void
}

/** The directory of the ACME account key and certificates: `--acme-dir`, else `acme` beside the data file. */
export function acmeDirOf(options: Pick<AcmeHttpsOptions, 'acmeDir' | 'data'>): string {
  if (options.acmeDir !== undefined) return options.acmeDir
  if (options.data === IN_MEMORY || isDatabaseUrl(options.data))
    throw new Error('--https over :memory: or a database needs --acme-dir')
  return join(dirname(options.data), 'acme')
}

/**
 * The answer of the plain-HTTP port to what is not an ACME challenge: 308 to the same host and path over HTTPS.
 * A 308 keeps the method and body, so an API client that follows it loses nothing; none of the API is served over
 * plain HTTP, so no answer there carries a cookie or a token. A `Host` that is none of `domains` is sent to the
 * first: the port must not redirect anyone to a host a visitor names (an open redirect).
 */
export function redirectToHttps(request: Request, httpsPort: number, domains: readonly string[]): Response {
  const url = new URL(request.url)
  if (!domains.includes(url.hostname.toLowerCase())) url.hostname = domains[0] as string
  url.protocol = 'https:'
  url.port = httpsPort === 443 ? '' : String(httpsPort)
  return new Response(null, { status: 308, headers: { location: url.href } })
}

/**
 * Listens on the plain-HTTP port (challenges answered, the rest redirected), then obtains the certificate, or takes
 * the one kept from an earlier run. Throws an `AcmeError` when the first order fails (the listener is stopped then).
 */
export async function startAcmeHttps(options: AcmeHttpsOptions): Promise<AcmeHttps> {
  const challenges = new HttpChallenges()
  let httpsPort: number | undefined
  let http: Server<undefined>
  try {
    http = Bun.serve({
      hostname: options.host,
      port: options.httpPort,
      // As the HTTPS port: a `--takeover` listens beside the server it replaces (which checks the port is not taken).
      reusePort: options.httpPort !== 0,
      development: false,
      fetch: (request) =>
        challenges.answer(request) ??
        (httpsPort === undefined
          ? new Response('HTTPS is starting\n', { status: 503, headers: { 'retry-after': '5' } })
          : redirectToHttps(request, httpsPort, options.domains)),
    })
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EACCES')
      throw new PortError(
        `cannot listen on port ${options.httpPort} for ACME's challenges: ports below 1024 need CAP_NET_BIND_SERVICE (docs/operations.md, "HTTPS without a proxy")`,
      )
    throw error
  }
  try {
    const dir = acmeDirOf(options)
    mkdirSync(dir, { recursive: true, mode: 0o700 })
    const certificates = await obtainCertificates({
      domains: options.domains,
      directoryUrl: options.directoryUrl,
      email: options.email,
      caRoots: options.caRoots,
      dir,
      challenges,
      log: options.log,
      count: options.count,
    })
    const servesOn = (port: number) => {
      httpsPort = port
    }
    return { certificates, http, servesOn }
  } catch (error) {
    await http.stop(true)
    throw error
  }
}
