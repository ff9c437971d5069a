import type { Example, Operation } from './shapes.ts'

const nameOf = (value: unknown, index: number): string => {
  const fields = (value ?? {}) as Record<string, unknown>
  const name = fields.name ?? fields.email
  return typeof name === 'string' ? name : `Example ${index + 1}`
}

/**
 * Documents a request body as the server takes it: JSON only (anything else is 415), with the examples of its
 * schema as named, ready-to-send examples; a `PATCH` body as a JSON merge patch first (RFC 7396), plain JSON too. The
 * generator also lists two form types the server refuses.
 */
export function documentRequestBody(operation: Operation): void {
  const json = operation.requestBody?.content['application/json']
  if (!operation.requestBody || !json) return
  const examples = json.schema?.examples
  const named: Record<string, Example> = {}
  if (Array.isArray(examples))
    examples.forEach((value, index) => {
      named[nameOf(value, index)] = { summary: nameOf(value, index), value }
    })
  const media = Object.keys(named).length > 0 ? { schema: json.schema, examples: named } : json
  // One object under both types: naming its schema later (names.ts) names it for both.
  operation.requestBody.content = operation.operationId.startsWith('patch')
    ? { 'application/merge-patch+json': media, 'application/json': media }
    : { 'application/json': media }
}
