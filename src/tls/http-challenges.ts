/** The path under which an ACME CA asks for HTTP-01 key authorizations (RFC 8555, section 8.3). */
export const CHALLENGE_PATH = '/.well-known/acme-challenge/'

/**
 * The HTTP-01 answers an order is waiting to be asked for: ACME puts a token's key authorization here while the CA
 * validates, and the plain-HTTP port answers `GET /.well-known/acme-challenge/{token}` from it. Made before the
 * HTTP port listens, so that the first order, at start-up, can be validated.
 */
export class HttpChallenges {
  private readonly answers = new Map<string, string>()

  /** Answers `token` with `keyAuthorization` until {@link remove}. */
  add(token: string, keyAuthorization: string): void {
    this.answers.set(token, keyAuthorization)
  }

  remove(token: string): void {
    this.answers.delete(token)
  }

  /**
   * The answer to a request for a challenge: the key authorization, 404 for an unknown token, or `undefined` when
   * the request is not for a challenge at all (the HTTP port then does what it does with anything else).
   */
  answer(request: Request): Response | undefined {
    if (request.method !== 'GET' && request.method !== 'HEAD') return undefined
    const { pathname } = new URL(request.url)
    if (!pathname.startsWith(CHALLENGE_PATH)) return undefined
    const keyAuthorization = this.answers.get(pathname.slice(CHALLENGE_PATH.length))
    if (keyAuthorization === undefined) return new Response('no such challenge\n', { status: 404 })
    return new Response(keyAuthorization, { headers: { 'content-type': 'application/octet-stream' } })
  }
}
