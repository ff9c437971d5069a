import { problemTypes, problemUri } from '../http/problem-types.ts'
import { MAX_TARGET_LENGTH } from '../http/request-target.ts'
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

const RATE_LIMIT: Record<string, Header> = {
  'RateLimit-Policy': {
    description:
      'The quota this request was counted against (draft-ietf-httpapi-ratelimit-headers): its name, `q` attempts per `w` seconds, e.g. `"artists-per-account";q=100;w=3600`. Sent where a quota counted the request: not for a service key, which no quota counts.',
    required: false,
    schema: { type: 'string', examples: ['"artists-per-account";q=100;w=3600'] },
  },
  RateLimit: {
    description:
      'Where the request left that quota: `r` attempts remaining and `t` seconds until it is whole again (the window, an upper bound, on a success; the exact wait, as `Retry-After`, on a 429), e.g. `"artists-per-account";r=99;t=3600`.',
    required: false,
    schema: { type: 'string', examples: ['"artists-per-account";r=99;t=3600'] },
  },
}

/** The operations whose success a quota counted, and so carries the `RateLimit` headers (src/http/rate-limit.ts). */
const COUNTED = new Set(['createArtist', 'createAlbum', 'createUser'])

/** Whether `operation` answers one page of a list: it takes `limit` and `offset` (src/http/pagination.ts). */
const isList = (operation: Operation) =>
  ['limit', 'offset'].every((name) =>
    operation.parameters?.some((parameter) => parameter.in === 'query' && parameter.name === name),
  )

/** A problem every operation may answer, whatever its route: `kind`, described by `when`. */
const everywhere = (kind: 'not-acceptable' | 'uri-too-long', when: string): Response => ({
  description: `${problemTypes[kind].title} ([${kind}](${problemUri(kind)})): ${when}`,
  content: { 'application/problem+json': { schema: PROBLEM_REF, examples: { [kind]: problemExample(kind) } } },
})

/**
 * Adds what every route does alike (src/http/) to the operations it concerns: the `Link` header of each list page,
 * the `RateLimit` headers of the answers a quota counted and of every 429,
 * the 406 of an `Accept` that excludes every type an operation sends (src/http/accept.ts), and the 414 of a request
 * target over 8 KiB (src/http/request-target.ts).
 */
export function documentHabits(operation: Operation): void {
  const ok = operation.responses[200]
  if (ok && isList(operation)) ok.headers = { ...ok.headers, Link: LINK }
  const created = operation.responses[201]
  if (created && COUNTED.has(operation.operationId)) created.headers = { ...created.headers, ...RATE_LIMIT }
  const refused = operation.responses[429]
  if (refused) refused.headers = { ...refused.headers, ...RATE_LIMIT }
  operation.responses = Object.fromEntries(
    Object.entries({
      ...operation.responses,
      406: everywhere(
        'not-acceptable',
        '`Accept` excludes every type this operation sends. Sent as `application/problem+json` whatever `Accept` says.',
      ),
      414: everywhere(
        'uri-too-long',
        `the path and query are longer than ${MAX_TARGET_LENGTH} characters. Past about 16 KiB of request line and headers together, the server answers a bare 431 instead.`,
      ),
    }).sort(([a], [b]) => Number(a) - Number(b)),
  )
}
