import { type ProblemKind, problemTypes, problemUri } from '../http/problem-types.ts'
import type { Example } from './shapes.ts'

// A typical `detail` (and `errors`) of each kind, as the server words it.
const details: Record<
  ProblemKind,
  { detail: string; errors?: { pointer?: string; parameter?: string; detail: string }[] }
> = {
  'validation-error': {
    detail: '/name: must be a string of 1–200 characters, not blank',
    errors: [{ pointer: '/name', detail: 'must be a string of 1–200 characters, not blank' }],
  },
  'malformed-json': { detail: "The request body is not valid JSON: JSON Parse error: Expected '}'." },
  'deprecated-operation': {
    detail:
      'Deleting artists is deprecated and nothing was deleted. To correct artist 7, replace it with PUT /api/v1/artists/7.',
  },
  unauthorized: {
    detail: 'This operation needs credentials: send Authorization: Bearer <token> or X-API-Key: <key>.',
  },
  forbidden: { detail: 'The server refuses this operation.' },
  'credential-not-allowed': {
    detail:
      "A service key belongs to no user. Send a user's bearer token (POST /api/v1/user/login) or personal API key.",
  },
  'account-disabled': {
    detail: "This account has been disabled by the server's operator. Ask them to enable it again.",
  },
  'not-found': { detail: 'There is no artist 42.' },
  'namespace-limit': {
    detail:
      'the server holds 500 namespaces, none unused for 10 minutes: drop one with DELETE /__admin/namespaces/{name}, or reuse a name',
  },
  'fixtures-memory': {
    detail:
      "the namespaces hold more than this server's budget for them (--fixtures-memory 256 MiB), and each is in use: drop the ones a test run no longer needs with DELETE /__admin/namespaces/{name}, or reset one",
  },
  'injected-fault': {
    detail: 'Fault 1, armed with POST /__admin/faults, answered this request with 503; nothing was changed.',
  },
  'method-not-allowed': {
    detail: 'PATCH is not supported on /api/v1/artists/1; use DELETE, GET, HEAD, OPTIONS, PUT.',
  },
  'uri-too-long': {
    detail:
      'The request target (path and query) is 9000 characters long; this server reads at most 8192. Send less in the query.',
  },
  'not-acceptable': {
    detail:
      'This resource is sent as application/json (its problems as application/problem+json), which Accept (application/xml) excludes. Send Accept: application/json, or none.',
  },
  conflict: {
    detail: 'The email carlos@rock-legends.com is already registered. Log in with POST /api/v1/user/login.',
  },
  'precondition-failed': {
    detail:
      'Artist 7 changed since you read it: its version is now "q3ZCr0YdUuq1pW4pVfDgxw", not the one in If-Match, and nothing was changed. Read it again (GET /api/v1/artists/7) and send your change with its new ETag.',
  },
  'idempotency-key-in-use': {
    detail:
      'The request first sent with Idempotency-Key "3f1c0e9a-…" is still being processed; nothing was done for this one. Send it again in 1 second to get its answer.',
  },
  'idempotency-key-reused': {
    detail:
      'Idempotency-Key "3f1c0e9a-…" was used for another request (another method, path or body) in the last 24 hours; nothing was done. Use a new key for a new request.',
  },
  'idempotency-keys-exhausted': {
    detail:
      'This account keeps 1 MiB of answers to Idempotency-Keys already; nothing was done. Send the request without one, or try a new key in 3600 seconds.',
  },
  'idempotency-keys-full': {
    detail:
      'The server keeps 64 MiB of answers to Idempotency-Keys already; nothing was done. Send the request without one, or try a new key in 3600 seconds.',
  },
  'payload-too-large': { detail: 'The request body is larger than 1048576 bytes (1 MiB).' },
  'unsupported-media-type': {
    detail: 'The request body must be JSON sent with Content-Type: application/json, not text/plain.',
  },
  'too-many-requests': { detail: 'Too many failed logins for this account. Try again in 600 seconds.' },
  'internal-error': { detail: 'Something went wrong on our side. The details are in the server log.' },
  'database-unavailable': {
    detail: 'The database is not reachable right now, so nothing was read or changed. Try again in a few seconds.',
  },
  'store-unavailable': { detail: 'The change could not be saved to disk, so it was not made. Try again later.' },
}

/** A complete problem body of `kind`, as an example of the responses that may carry it. */
export function problemExample(kind: ProblemKind): Example {
  const { title, status } = problemTypes[kind]
  return { summary: title, value: { type: problemUri(kind), title, status, ...details[kind] } }
}
