import type { Header, Operation } from './shapes.ts'

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

/** Adds what every route does alike (src/http/) to the operations it concerns: the `Link` header of each list page. */
export function documentHabits(operation: Operation): void {
  const ok = operation.responses[200]
  if (ok && isList(operation)) ok.headers = { ...ok.headers, Link: LINK }
}
