import { type ProblemKind, problemTypes, problemUri } from '../http/problem-types.ts'
import { problemExample } from './problem-examples.ts'
import type { Header, Operation, Response, Schema } from './shapes.ts'

/** The reference to the one schema of every error body. */
export const PROBLEM_REF = { $ref: '#/components/schemas/Problem' }

const kindsByStatus = new Map<number, ProblemKind[]>()
for (const kind of Object.keys(problemTypes) as ProblemKind[]) {
  const { status } = problemTypes[kind]
  kindsByStatus.set(status, [...(kindsByStatus.get(status) ?? []), kind])
}

// Writes pass layers that routes do not repeat in their `response`: `--read-only` refuses them (403) before anything
// else, and the JSON body parser reads them (after credentials, on routes that need them), so any write may answer
// 400 (malformed JSON, a body that is not an object), 413 or 415, whether or not it takes a body. Any request may
// fail with 500.
const WRITES = new Set(['post', 'put', 'patch', 'delete'])
const writeKinds: ProblemKind[] = [
  'malformed-json',
  'validation-error',
  'forbidden',
  'payload-too-large',
  'unsupported-media-type',
]

// What every POST may answer for its Idempotency-Key (src/http/idempotency.ts).
const idempotencyKinds: ProblemKind[] = [
  'idempotency-key-in-use',
  'idempotency-key-reused',
  'idempotency-keys-exhausted',
  'idempotency-keys-full',
]

/** Whether an operation may answer with a problem of `kind`, among those of a status its route lists. */
function mayAnswer(kind: ProblemKind, operation: Operation, write: boolean): boolean {
  switch (kind) {
    case 'malformed-json':
    case 'forbidden':
      return write
    case 'validation-error':
      return write || (operation.parameters?.length ?? 0) > 0
    case 'deprecated-operation':
      return operation.deprecated === true
    case 'method-not-allowed':
      return false
    // Credentials of the wrong kind: only where credentials are asked for.
    case 'credential-not-allowed':
      return operation.security === undefined || operation.security.length > 0
    // Added below for the login only.
    case 'account-disabled':
      return false
    // Added below for every POST, the requests that take an Idempotency-Key.
    case 'idempotency-key-in-use':
    case 'idempotency-key-reused':
    case 'idempotency-keys-exhausted':
    case 'idempotency-keys-full':
      return false
    // Answered before any route, by a --fixtures server only (src/fixtures/front.ts): the Fixtures tag tells of them.
    case 'namespace-limit':
    case 'injected-fault':
      return false
    default:
      return true
  }
}

/** The problem kinds of an operation, by status. */
function problemKinds(operation: Operation, method: string): Map<number, Set<ProblemKind>> {
  const write = WRITES.has(method)
  const kinds = new Map<number, Set<ProblemKind>>()
  const add = (kind: ProblemKind) => {
    const { status } = problemTypes[kind]
    kinds.set(status, (kinds.get(status) ?? new Set()).add(kind))
  }
  for (const status of Object.keys(operation.responses).map(Number))
    for (const kind of kindsByStatus.get(status) ?? []) if (mayAnswer(kind, operation, write)) add(kind)
  if (write) writeKinds.forEach(add)
  if (method === 'post') idempotencyKinds.forEach(add)
  // Only a login (with the right password) learns that its account is disabled; its credentials just get 401.
  if (operation.operationId === 'loginUser') add('account-disabled')
  // Where credentials are asked for, an address with too many that failed is refused before its own is checked.
  if (operation.security === undefined || operation.security.length > 0) add('too-many-requests')
  add('internal-error')
  return kinds
}

const header = (description: string, schema: Schema, required = true): Header => ({ description, required, schema })

const lowerFirst = (text: string) => (text[0] ?? '').toLowerCase() + text.slice(1)

export function problemResponse(kinds: ProblemKind[]): Response {
  const response: Response = {
    description: kinds
      .map((kind, index) => {
        const { title } = problemTypes[kind]
        return `${index === 0 ? title : lowerFirst(title)} ([${kind}](${problemUri(kind)}))`
      })
      .join(', or '),
    content: {
      'application/problem+json': {
        schema: PROBLEM_REF,
        examples: Object.fromEntries(kinds.map((kind) => [kind, problemExample(kind)])),
      },
    },
  }
  if (kinds.includes('unauthorized'))
    response.headers = {
      'WWW-Authenticate': header('The scheme to authenticate with.', {
        type: 'string',
        examples: ['Bearer realm="rock-legends"'],
      }),
    }
  // Every 429 and every 503 says when to try again.
  if (kinds.some((kind) => problemTypes[kind].status === 429 || problemTypes[kind].status === 503))
    response.headers = { 'Retry-After': header('Seconds to wait before trying again.', { type: 'integer' }) }
  if (kinds.includes('precondition-failed'))
    response.headers = {
      ETag: header('The current version of the artist: read it again, and send your change with this in `If-Match`.', {
        type: 'string',
        examples: ['"q3ZCr0YdUuq1pW4pVfDgxw"'],
      }),
    }
  if (kinds.includes('deprecated-operation'))
    // Sent with the deprecation problem only, not with the other problems of this status.
    response.headers = {
      Deprecation: header('When the operation was deprecated (RFC 9745).', { type: 'string' }, false),
      Link: header('Where the deprecation is explained.', { type: 'string' }, false),
    }
  return response
}

/**
 * Documents every response of an operation as the server sends it: errors as `application/problem+json` with the
 * shared `Problem` schema, an example of each problem type it may carry and its headers; 201 with `Location`; 204
 * without a body. Adds the problems that routes do not list themselves (see `WRITES`).
 */
export function documentResponses(operation: Operation, method: string): void {
  const problems = problemKinds(operation, method)
  const statuses = new Set([...Object.keys(operation.responses).map(Number), ...problems.keys()])
  const responses: Record<string, Response> = {}
  for (const status of [...statuses].sort((a, b) => a - b)) {
    const kinds = problems.get(status)
    const generated = operation.responses[status]
    if (status >= 400 && kinds) responses[status] = problemResponse([...kinds])
    else if (generated) {
      // The generator repeats the description in the schema; on the response is enough. A 204 has no body.
      for (const media of Object.values(generated.content ?? {})) delete media.schema?.description
      responses[status] = status === 204 ? { description: generated.description } : generated
    }
  }
  const created = responses[201]
  if (created)
    created.headers = { Location: header('The path of what was created.', { type: 'string', format: 'uri-reference' }) }
  operation.responses = responses
}
