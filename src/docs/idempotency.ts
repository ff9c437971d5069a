import { MAX_KEY_LENGTH } from '../http/idempotency.ts'
import type { Operation, Parameter } from './shapes.ts'

/**
 * The operations that run once per `Idempotency-Key` (src/http/idempotency.ts). The routes cannot say it in their
 * schemas (a header schema would be validated before the credentials are), so the document says it here; every
 * answer the tests see is checked against it (test/support/openapi.ts).
 */
const IDEMPOTENT = new Set(['createArtist', 'createAlbum'])

const idempotencyKey: Parameter = {
  name: 'Idempotency-Key',
  in: 'header',
  required: false,
  description: `Makes the create safe to retry (IETF draft-ietf-httpapi-idempotency-key-header): a new unique value per request (a UUID, for example), the same value only to send that very request again. The same key, method, path and body, by the same account, within 24 hours, answers the first answer again, marked \`Idempotent-Replayed: true\`, and adds nothing; the same key with another body is 422; while the first request is still being processed, 409 with \`Retry-After\`. 1–${MAX_KEY_LENGTH} printable ASCII characters, bare or quoted as a structured-field string.`,
  schema: {
    type: 'string',
    minLength: 1,
    maxLength: MAX_KEY_LENGTH,
    examples: ['8e03978e-40d5-43e8-bc93-6894a57f9324'],
  },
}

/** Adds `Idempotency-Key` to the operations that honour it, and `Idempotent-Replayed` to their 201. */
export function documentIdempotency(operation: Operation): void {
  if (!IDEMPOTENT.has(operation.operationId)) return
  operation.parameters = [...(operation.parameters ?? []), idempotencyKey]
  const created = operation.responses[201]
  if (created)
    created.headers = {
      ...created.headers,
      'Idempotent-Replayed': {
        description:
          '`true` when this is the answer to an earlier request with the same `Idempotency-Key`, sent again: nothing was added this time. Absent otherwise.',
        required: false,
        schema: { type: 'string', enum: ['true'] },
      },
    }
}
