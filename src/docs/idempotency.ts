import { MAX_KEY_LENGTH, MIN_SENSITIVE_KEY_LENGTH } from '../http/idempotency.ts'
import type { Operation, Parameter } from './shapes.ts'

/**
 * The header every POST takes (src/http/idempotency.ts). The routes cannot say it in their schemas (a header schema
 * would be validated before the credentials are), so the document says it here; every answer the tests see is
 * checked against it (test/support/openapi.ts).
 */
const idempotencyKey: Parameter = {
  name: 'Idempotency-Key',
  in: 'header',
  required: false,
  description: `Makes the request safe to retry (IETF draft-ietf-httpapi-idempotency-key-header): a new unique value per request (a UUID, for example), the same value only to send that very request again. The same key, method, path and body, from the same account (or, without credentials, the same client address), within 24 hours, answers the first answer again, marked \`Idempotent-Replayed: true\`, and does nothing more; the same key with another body is 422; while the first request is still being processed, 409 with \`Retry-After\`. 1–${MAX_KEY_LENGTH} printable ASCII characters, bare or quoted as a structured-field string.`,
  schema: {
    type: 'string',
    minLength: 1,
    maxLength: MAX_KEY_LENGTH,
    examples: ['8e03978e-40d5-43e8-bc93-6894a57f9324'],
  },
}

/**
 * The operations whose body holds a password or whose answer a secret: their key is the only thing that unlocks what
 * the server keeps of them, so it must be as hard to guess as a secret.
 */
const SENSITIVE = new Set(['createUser', 'loginUser', 'createApiKey'])

const sensitiveKey: Parameter = {
  ...idempotencyKey,
  description: `${idempotencyKey.description} Here the body holds a password or the answer a secret, so the key must be random and at least ${MIN_SENSITIVE_KEY_LENGTH} characters: the server keeps the answer encrypted under a key derived from it, and keeps the key itself only as a digest.`,
  schema: { ...idempotencyKey.schema, minLength: MIN_SENSITIVE_KEY_LENGTH },
}

/** Adds `Idempotency-Key` to every POST, and `Idempotent-Replayed` to its successful answer. */
export function documentIdempotency(operation: Operation, method: string): void {
  if (method !== 'post') return
  const sensitive = SENSITIVE.has(operation.operationId)
  operation.parameters = [...(operation.parameters ?? []), sensitive ? sensitiveKey : idempotencyKey]
  const success = Object.keys(operation.responses).find((status) => status.startsWith('2'))
  const answer = success === undefined ? undefined : operation.responses[success]
  if (answer)
    answer.headers = {
      ...answer.headers,
      'Idempotent-Replayed': {
        description:
          '`true` when this is the answer to an earlier request with the same `Idempotency-Key`, sent again: nothing was done this time. Absent otherwise.',
        required: false,
        schema: { type: 'string', enum: ['true'] },
      },
    }
}
