/** What a client may see in a problem's `type`, with the page the server answers at that URI. */
export interface ProblemType {
  status: number
  title: string
  /** A few sentences for `GET /problems/{slug}`: what happened and what to do. */
  explanation: string
}

/** Every kind of problem the server can answer with; `type` is `/problems/<key>`. */
export const problemTypes = {
  'validation-error': {
    status: 400,
    title: 'The request is not valid',
    explanation:
      'One or more fields or parameters break the rules of the API. The `errors` array names each one (a JSON Pointer into the body in `pointer`, or a query or path parameter in `parameter`) with what is wrong; fix them and send the request again.',
  },
  'malformed-json': {
    status: 400,
    title: 'The body is not valid JSON',
    explanation:
      'The request said it carried JSON, but the body could not be parsed. Check quoting, commas and brackets, and that the body is UTF-8.',
  },
  'deprecated-operation': {
    status: 400,
    title: 'This operation is deprecated',
    explanation:
      'Deleting artists is deprecated and does nothing. To correct an artist, replace it with PUT /api/v1/artists/{artistId}.',
  },
  unauthorized: {
    status: 401,
    title: 'Credentials are missing or not valid',
    explanation:
      'Writes need `Authorization: Bearer <token>` (from POST /api/v1/user/login) or `X-API-Key: <key>` (a service key of the operator, or a personal key from /api/v1/user/api-keys). Unknown, expired and revoked credentials all get this answer, and so does a login whose email or password is wrong.',
  },
  forbidden: {
    status: 403,
    title: 'The operation is not allowed',
    explanation:
      'The server refuses this operation whoever asks, for example because it runs read-only (--read-only): reads work, every write is refused.',
  },
  'credential-not-allowed': {
    status: 403,
    title: 'These credentials cannot be used for this operation',
    explanation:
      "The credentials are valid, but not for this. Account operations under /api/v1/user act for a user, so they need that user's bearer token or personal API key; an operator's service key belongs to no user. Logging out ends a bearer token: to revoke a personal API key, use DELETE /api/v1/user/api-keys/{id}. The other way round, operations of the operator (resetting a fixture server with POST /__admin/reset) need a service key (--api-key), not a user's credentials.",
  },
  'account-disabled': {
    status: 403,
    title: 'The account is disabled',
    explanation:
      "The email and password are right, but the server's operator has disabled this account (rock-legends users disable): it cannot log in, and its bearer tokens and personal API keys are refused. Ask the operator to enable it again.",
  },
  'not-found': {
    status: 404,
    title: 'Not found',
    explanation:
      'There is nothing at this address: the route does not exist, or the artist or album it names does not.',
  },
  'method-not-allowed': {
    status: 405,
    title: 'Method not allowed',
    explanation: 'The path exists but does not support this HTTP method. The `Allow` header lists the methods it does.',
  },
  'not-acceptable': {
    status: 406,
    title: 'None of the accepted types can be sent',
    explanation:
      'The `Accept` header of the request excludes every type this resource is sent as: JSON (`application/json`, and `application/problem+json` for problems) for the API, `text/html` for the pages, `image/svg+xml` for the covers and `text/event-stream` for the event stream. Send one of them in `Accept`, `*/*`, or no `Accept` at all.',
  },
  conflict: {
    status: 409,
    title: 'Conflict',
    explanation:
      'The request conflicts with what is stored: an email address that is already registered (in any look-alike form: full-width, decomposed or upper-case), or a new personal API key for an account that already holds 100. Log in instead, or revoke a key you no longer use (DELETE /api/v1/user/api-keys/{id}) and try again.',
  },
  'idempotency-key-in-use': {
    status: 409,
    title: 'A request with this Idempotency-Key is still being processed',
    explanation:
      'The first request sent with this `Idempotency-Key` (by the same account, or without credentials from the same client address, to any replica) has not been answered yet. Nothing was done for this one. Wait for the seconds in `Retry-After` and send the very same request again: once the first is answered, you get its answer, marked `Idempotent-Replayed: true`. Should its server have stopped before the request was done, the key is free again 60 seconds after the first request began; a create once saved is answered again at once, whatever happens to its server.',
  },
  'precondition-failed': {
    status: 412,
    title: 'A condition of the request does not hold',
    explanation:
      'The request carried a condition (`If-Match` or `If-None-Match`, RFC 9110) that the resource as stored now does not meet. Most often a write named, in `If-Match`, the version (`ETag`) of the artist or album it was based on, and it has changed since: someone else saved it in between. Nothing was changed. The `ETag` header carries the current version: read the resource again (GET it), decide what it should hold, and send the request again with the new tag. `If-None-Match: *` on a write to a resource that exists fails the same way. Leave the condition out to write whatever is stored.',
  },
  'payload-too-large': {
    status: 413,
    title: 'The body is too large',
    explanation:
      'Request bodies are limited to 1 MiB, and to 16 KiB on sign-up and login (more than any valid one needs). Send less data in one request.',
  },
  'uri-too-long': {
    status: 414,
    title: 'The URL is too long',
    explanation:
      'The request target (path and query) is longer than the 8 KiB this server reads. No route needs that much: send less in the query. Past about 16 KiB of request line and headers together, the server refuses the request with a bare 431 instead.',
  },
  'idempotency-key-reused': {
    status: 422,
    title: 'This Idempotency-Key was used for another request',
    explanation:
      'An `Idempotency-Key` names one request: the same method, path and body, by the same account (or, without credentials, from the same client address), for 24 hours. This one was sent before with another method, path or body, so it is not a retry of it, and nothing was done. Use a new key (a UUID, for example) for each new request, and the same key only to send that very request again.',
  },
  'unsupported-media-type': {
    status: 415,
    title: 'The body must be JSON',
    explanation: 'Send request bodies as JSON with `Content-Type: application/json`.',
  },
  'too-many-requests': {
    status: 429,
    title: 'Too many requests',
    explanation: 'Too many attempts in a short time. Wait for the number of seconds in the `Retry-After` header.',
  },
  'idempotency-keys-exhausted': {
    status: 429,
    title: 'Too many Idempotency-Keys kept for this account',
    explanation:
      'The server keeps the answers to requests sent with an `Idempotency-Key` for 24 hours, at most 1 MiB of them per account (its tokens and keys together; the service keys together; requests without credentials, per client address). This account (or address) holds that much, so a request with a new key is refused and nothing was done; keys already used still get their answers. Send the request without an `Idempotency-Key`, or wait for the seconds in `Retry-After`, when the oldest kept answer expires.',
  },
  'namespace-limit': {
    status: 429,
    title: 'Too many namespaces',
    explanation:
      'A server started with --fixtures holds at most 500 namespaces (Rock-Legends-Namespace) at once, or as many as --fixtures-namespaces says, and one client address other than the machine it runs on a quarter of them; an unused one makes room for a new one after 10 minutes. Drop the namespaces a test run no longer needs with DELETE /__admin/namespaces/{name} (service key), or reuse names, for example one per worker rather than one per test. `Retry-After` says when an unused one can make room.',
  },
  'fixtures-memory': {
    status: 507,
    title: 'The namespaces are full',
    explanation:
      'A server started with --fixtures keeps what all its namespaces hold (catalogues, request journals, the changes kept for event streams) within one budget, 256 MiB unless --fixtures-memory says otherwise. Past it, the least recently used namespaces that no request is using are dropped; only when every namespace left is in use are writes refused with this problem, reads still answered. Drop the namespaces a test run no longer needs with DELETE /__admin/namespaces/{name} (service key), or reset one with POST /__admin/reset. `Retry-After` says when to try again.',
  },
  'injected-fault': {
    status: 503,
    title: 'A fault armed by a test',
    explanation:
      'The server runs with --fixtures, and a test armed a fault on this request with POST /__admin/faults: the server answered with the status the test chose, before the request reached the API, so nothing was read or changed. GET /__admin/faults lists the faults of the namespace and how often each fired; DELETE /__admin/faults removes them.',
  },
  'idempotency-keys-full': {
    status: 503,
    title: 'The server keeps as many Idempotency-Keys as it can',
    explanation:
      'The server keeps the answers to requests sent with an `Idempotency-Key` for 24 hours, at most 64 MiB of them in all, and holds that much now. A request with a new key is refused rather than any kept answer forgotten (a retry must never be made twice), and nothing was done; keys already used still get their answers. Send the request without an `Idempotency-Key`, or wait for the seconds in `Retry-After`.',
  },
  'internal-error': {
    status: 500,
    title: 'Internal server error',
    explanation:
      'The server failed unexpectedly. Nothing about the failure is shown to clients; the operator finds the details in the server log.',
  },
  'database-unavailable': {
    status: 503,
    title: 'The database is unavailable',
    explanation:
      'The server runs over a shared database (PostgreSQL or CockroachDB) that it cannot reach right now, or that did not answer in time. Nothing was read or changed: a write answered with this problem was not made. `Retry-After` says when to try again; the server reconnects by itself when the database is back. Where the database lives and why it failed are in the server log, never in the answer.',
  },
  'store-unavailable': {
    status: 503,
    title: 'The change could not be saved',
    explanation:
      'The server could not make the change durable (for example the disk is full or not writable), so it refused it: nothing was changed. Earlier data is intact. Try again once the operator has fixed the storage; `Retry-After` says when to try at the earliest. The cause is in the server log, never in the answer.',
  },
} satisfies Record<string, ProblemType>

/** The key of a problem type. */
export type ProblemKind = keyof typeof problemTypes

/** The `type` URI of a problem kind, relative to the server. */
export const problemUri = (kind: ProblemKind) => `/problems/${kind}`
