// Declares the modules of acme-client imported one by one, for every program that type-checks this file (a project
// depending on this package compiles it without the declaration file otherwise).
/// <reference path="./acme-client.d.ts" />
import { AsyncLocalStorage } from 'node:async_hooks'
import { Agent } from 'node:https'
import acmeAxios from 'acme-client/src/axios.js'
import Client from 'acme-client/src/client.js'
import crypto from 'acme-client/src/crypto/index.js'
import type { AxiosAdapter } from 'axios'
import axios from 'axios/dist/node/axios.cjs'
import type { StoredCertificate } from './certificate-store.ts'
import type { HttpChallenges } from './http-challenges.ts'

/** An RFC 8555 problem document as a CA sent it, with how long it asked to be left alone (`Retry-After`). */
export interface AcmeProblem {
  type: string
  detail: string
  status: number
  /** The identifiers a problem names in its subproblems (RFC 8555, section 6.7.1). */
  identifiers: string[]
  retryAfterMs?: number
}

/** An order that failed: which domains, which CA, and the CA's problem when it sent one (else why it was not reached). */
export class AcmeError extends Error {
  constructor(
    readonly domains: readonly string[],
    readonly directoryUrl: string,
    readonly problem: AcmeProblem | undefined,
    cause: unknown,
  ) {
    const named = (problem?.identifiers.length ? problem.identifiers : domainsNamedIn(problem?.detail, domains)).join(
      ', ',
    )
    super(
      problem
        ? `the ACME CA ${directoryUrl} refused a certificate for ${named}: ${problem.detail} (${shortType(problem.type)})`
        : `could not order a certificate for ${named} from the ACME CA ${directoryUrl}: ${reason(cause)}`,
      { cause },
    )
    this.name = 'AcmeError'
  }

  /** Whether asking again later may succeed: the CA was away, busy or limiting the rate, not refusing the names. */
  get transient(): boolean {
    if (!this.problem) return true
    const type = shortType(this.problem.type)
    return type === 'rateLimited' || type === 'badNonce' || this.problem.status >= 500
  }
}

const shortType = (type: string) => type.replace('urn:ietf:params:acme:error:', '')

const domainsNamedIn = (detail: string | undefined, domains: readonly string[]) => {
  const named = domains.filter((domain) => detail?.includes(domain))
  return named.length > 0 ? named : [...domains]
}

const reason = (cause: unknown) => {
  const code = (cause as { code?: string } | undefined)?.code
  return code ?? (cause instanceof Error ? cause.message : String(cause))
}

/** What the requests of one order share: the agent that trusts the CA's test roots, and the last problem seen. */
interface OrderContext {
  agent?: Agent
  problem?: AcmeProblem
  /** The last request that got no answer at all (refused, timed out, a certificate not trusted). */
  failure?: unknown
}

const orders = new AsyncLocalStorage<OrderContext>()

const retryAfterMs = (header: unknown): number | undefined => {
  if (typeof header !== 'string') return undefined
  const seconds = Number(header)
  if (Number.isFinite(seconds)) return Math.max(0, seconds * 1000)
  const at = Date.parse(header)
  return Number.isNaN(at) ? undefined : Math.max(0, at - Date.now())
}

/** Notes a problem document in the order it answers, for the error that follows it to name. */
function notice(response: { status: number; headers: Record<string, unknown>; data: unknown } | undefined): void {
  const context = orders.getStore()
  const data = response?.data as { type?: unknown; detail?: unknown; subproblems?: unknown } | undefined
  if (!context || !response || response.status < 400 || typeof data?.type !== 'string') return
  const subproblems = Array.isArray(data.subproblems) ? data.subproblems : []
  context.problem = {
    type: data.type,
    detail: typeof data.detail === 'string' ? data.detail : '',
    status: response.status,
    identifiers: subproblems.flatMap((sub: { identifier?: { value?: unknown } }) =>
      typeof sub?.identifier?.value === 'string' ? [sub.identifier.value] : [],
    ),
    retryAfterMs: retryAfterMs(response.headers['retry-after']),
  }
}

let installed = false

/**
 * Hooks acme-client's HTTP client once per process. Its own retries are turned off: they wait up to 75 s for a CA
 * that is away, inside one request, while a renewal here retries the whole order on a schedule of its own that
 * honours the CA's `Retry-After` and `rateLimited` problems. (Nonces the CA rejects are still retried by the library,
 * as RFC 8555 asks.)
 */
function install(): void {
  if (installed) return
  installed = true
  const defaults = acmeAxios.defaults as typeof acmeAxios.defaults & { acmeSettings: { retryMaxAttempts: number } }
  defaults.acmeSettings.retryMaxAttempts = 0
  // A request that got no answer reaches the library's own error handler first, which loses why: the adapter notes
  // it on the way.
  const http = axios.getAdapter('http') as AxiosAdapter
  acmeAxios.interceptors.request.use((config) => {
    const context = orders.getStore()
    if (!context) return config
    if (context.agent) config.httpsAgent = context.agent
    config.adapter = async (request) => {
      try {
        return await http(request)
      } catch (error) {
        if (!(error as { response?: unknown }).response) context.failure = error
        throw error
      }
    }
    return config
  })
  acmeAxios.interceptors.response.use(
    (response) => {
      notice(response)
      return response
    },
    (error) => {
      notice(error?.response)
      return Promise.reject(error)
    },
  )
}

/** What one order needs. */
export interface OrderRequest {
  domains: readonly string[]
  directoryUrl: string
  email?: string
  /** The account's private key (PEM). */
  accountKey: string
  challenges: HttpChallenges
  /** Extra roots to trust for the CA's own HTTPS, for a test CA such as Pebble; production CAs need none. */
  agent?: Agent
}

/** An agent trusting `caRoots` for the CA's HTTPS (a test CA's roots), or none to trust the system's roots. */
export const agentFor = (caRoots: string | undefined) =>
  caRoots ? new Agent({ ca: caRoots, keepAlive: false }) : undefined

/** A new ECDSA P-256 private key (PEM), for an account or a certificate. */
export const newKey = async () => (await crypto.createPrivateEcdsaKey('P-256')).toString()

/**
 * Orders a certificate for `domains` over HTTP-01: registers the account (or finds it again by its key), places the
 * order, answers the challenges through `challenges` while the CA validates, finalizes with a new key. Throws
 * {@link AcmeError}.
 */
export async function orderCertificate(request: OrderRequest): Promise<StoredCertificate> {
  install()
  const context: OrderContext = { agent: request.agent }
  return orders.run(context, async () => {
    try {
      const client = new Client({ directoryUrl: request.directoryUrl, accountKey: request.accountKey })
      const [key, csr] = await crypto.createCsr(
        { commonName: request.domains[0], altNames: [...request.domains] },
        await newKey(),
      )
      if (!request.email) {
        // Without a contact, acme-client sends an account that exists `{ termsOfServiceAgreed }` as an update, which
        // RFC 8555 CAs such as Pebble refuse as an empty one: the account is found first, which it then reads with a
        // POST-as-GET. A new account is refused here (it does not exist yet) and registered by `auto` below.
        await client.createAccount({ onlyReturnExisting: true }).catch(() => undefined)
        context.problem = undefined
        context.failure = undefined
      }
      const cert = await client.auto({
        csr,
        email: request.email,
        termsOfServiceAgreed: true,
        // The CA validates: the library's own look at the answer would go through this machine's DNS and port 80,
        // which behind NAT or a firewall may not be what the CA sees.
        skipChallengeVerification: true,
        challengePriority: ['http-01'],
        challengeCreateFn: async (_authz, challenge, keyAuthorization) => {
          request.challenges.add(challenge.token, keyAuthorization)
        },
        challengeRemoveFn: async (_authz, challenge) => {
          request.challenges.remove(challenge.token)
        },
      })
      return { cert: `${cert.trim()}\n`, key: `${key.toString().trim()}\n` }
    } catch (error) {
      throw new AcmeError(request.domains, request.directoryUrl, context.problem, context.failure ?? error)
    }
  })
}
