import { problemTypes, problemUri } from '../http/problem-types.ts'
import { problemExample } from './problem-examples.ts'
import { PROBLEM_REF } from './responses.ts'
import type { Header, Operation, Response } from './shapes.ts'

const LINK: Header = {
  description:
    'Links to the first, previous (not on the first page), next (while there is one, as `meta.next`) and last page (RFC 8288), each a path and query on this server: `</api/v1/artists?limit=10&offset=10>; rel="next"`.',
  required: true,
  schema: {
    type: 'string',
    examples: [
      '</api/v1/artists?limit=10&offset=0>; rel="first", </api/v1/artists?limit=10&offset=10>; rel="next", </api/v1/artists?limit=10&offset=30>; rel="last"',
    ],
  },
}

/** Whether `operation` answers one page of a list: it takes `limit` and `offset` (src/http/pagination.ts). */
const isList = (operation: Operation) =>
  ['limit', 'offset'].every((name) =>
    operation.parameters?.some((parameter) => parameter.in === 'query' && parameter.name === name),
  )

/** The 406 every operation may answer (src/http/accept.ts). */
const notAcceptable = (): Response => ({
  description: `${problemTypes['not-acceptable'].title} ([not-acceptable](${problemUri('not-acceptable')})): \`Accept\` excludes every type this operation sends. Sent as \`application/problem+json\` whatever \`Accept\` says.`,
  content: {
    'application/problem+json': {
      schema: PROBLEM_REF,
      examples: { 'not-acceptable': problemExample('not-acceptable') },
    },
  },
})

/**
 * Adds what every route does alike (src/http/) to the operations it concerns: the `Link` header of each list page,
 * and the 406 of an `Accept` that excludes every type an operation sends.
 */
export function documentHabits(operation: Operation): void {
  const ok = operation.responses[200]
  if (ok && isList(operation)) ok.headers = { ...ok.headers, Link: LINK }
  operation.responses = Object.fromEntries(
    Object.entries({ ...operation.responses, 406: notAcceptable() }).sort(([a], [b]) => Number(a) - Number(b)),
  )
}
