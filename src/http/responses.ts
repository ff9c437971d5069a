import { Type } from '@sinclair/typebox'
import { t } from 'elysia'
import { type ProblemKind, problemTypes } from './problem-types.ts'

/** The RFC 9457 problem details body. */
export const ProblemDetails = t.Object({
  type: t.String({ description: 'A URI reference; GET it for an explanation.', examples: ['/problems/not-found'] }),
  title: t.String(),
  status: Type.Integer({ description: 'Always equal to the HTTP status.' }),
  detail: t.String(),
  errors: t.Optional(
    t.Array(
      t.Object({
        pointer: t.Optional(t.String({ description: 'JSON Pointer to the invalid body field.' })),
        parameter: t.Optional(t.String({ description: 'The invalid query or path parameter.' })),
        detail: t.String(),
      }),
    ),
  ),
})

const titles = new Map<number, string>()
for (const kind of Object.keys(problemTypes) as ProblemKind[]) {
  const { status, title } = problemTypes[kind]
  titles.set(status, titles.has(status) ? `${titles.get(status)}; ${title}` : title)
}

/** Response schemas for the given problem statuses, for a route's `response` option and the OpenAPI document. */
export function problemResponses<const S extends number>(...statuses: S[]) {
  const responses = {} as Record<S, typeof ProblemDetails>
  for (const status of statuses)
    responses[status] = t.Object(ProblemDetails.properties, { description: titles.get(status) ?? 'Problem' })
  return responses
}
