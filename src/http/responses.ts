import { Type } from '@sinclair/typebox'
import { type TSchema, t } from 'elysia'

/** The RFC 9457 problem details body: the `Problem` schema of the OpenAPI document. */
export const ProblemDetails = t.Object(
  {
    type: t.String({
      description: 'A URI reference to the kind of problem; GET it for a short explanation.',
      examples: ['/problems/not-found'],
    }),
    title: t.String({ description: 'A short summary of the kind of problem.', examples: ['Not found'] }),
    status: Type.Integer({ description: 'Always equal to the HTTP status.', examples: [404] }),
    detail: t.String({
      description: 'What went wrong with this request, and what to do about it.',
      examples: ['There is no artist 42.'],
    }),
    errors: t.Optional(
      t.Array(
        t.Object({
          pointer: t.Optional(
            t.String({ description: 'JSON Pointer to the invalid body field.', examples: ['/name'] }),
          ),
          parameter: t.Optional(t.String({ description: 'The invalid query or path parameter.', examples: ['limit'] })),
          detail: t.String({ description: 'What is wrong with it.' }),
        }),
        { description: 'Validation problems only: one entry per invalid field or parameter.' },
      ),
    ),
  },
  { description: 'RFC 9457 problem details, sent as `application/problem+json` with every error.' },
)

/**
 * Response schemas for the given problem statuses, for a route's `response` option. The OpenAPI document replaces
 * each with a reference to the shared `Problem` schema and lists the problem types of that status.
 */
export function problemResponses<const S extends number>(...statuses: S[]) {
  const responses = {} as Record<S, typeof ProblemDetails>
  for (const status of statuses) responses[status] = ProblemDetails
  return responses
}

/**
 * `schema` with the description of one operation's answer, which the OpenAPI document shows for that status.
 * Validation is unchanged: a description is an annotation.
 */
export const described = <S extends TSchema>(schema: S, description: string): S => ({ ...schema, description })

/**
 * The 204 answer, which has no body. Not `t.Void()`: @elysiajs/openapi 1.4.16 writes a void schema as
 * `content: { type: 'void' }`, which is not valid OpenAPI. The document drops the content of every 204 and keeps
 * this description.
 */
export const NoContent = (description: string) => t.Any({ description })
