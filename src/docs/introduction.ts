import { DEFAULT_LIMIT, MAX_LIMIT } from '../http/pagination.ts'

/** The `info.description` of the document: what a client needs to know before the first call, in Markdown. */
export const introduction = `A catalogue of legendary Argentine rock artists and their albums: Spinetta, Charly García,
Cerati, Fito Páez, María Gabriela Epumer and more, with sign-up, login and authenticated writes.

## Reading
Reads are public. Lists are paginated with \`limit\` (1–${MAX_LIMIT}, default ${DEFAULT_LIMIT}) and \`offset\`
(default 0), in id order, and come as \`{ data, meta }\`; \`meta.next\` is the path of the next page, \`null\` on the
last one.

Query parameters an operation does not declare are ignored, on every operation (a cache-buster such as \`_=…\`,
\`utm_source\`): the answer is the one without them. A declared parameter that is malformed, or given more than once
(\`limit=10&limit=20\`), is refused with a 400 problem naming it.

## Writing
Creating and replacing artists and adding albums need a credential, sent either way:

- \`Authorization: Bearer <token>\`, with a token from **Log in for a bearer token** (\`POST /api/v1/user/login\`);
- \`X-API-Key: <key>\`, with a service key of the operator (\`--api-key\`) or a personal key from
  **Create a personal API key**.

To try a write here, choose **bearerAuth** or **apiKeyHeader** under Authentication and paste the token or key.

## Errors
Every error is [RFC 9457](https://www.rfc-editor.org/rfc/rfc9457) problem details, sent as
\`application/problem+json\`. Its \`status\` always equals the HTTP status, \`detail\` says what to do, and its
\`type\`, such as [\`/problems/validation-error\`](/problems/validation-error), is a page of this server that explains
the kind of problem. Validation problems list each invalid field (a JSON \`pointer\`) or parameter in \`errors\`.`

/**
 * The groups operations are listed under. `Artists` and `Authentication` are the first published document's tags,
 * kept with its operations under them: generators name their services after tags (`ArtistsService`), so code
 * written against a client generated from that document compiles against one generated from ours.
 */
export const tags = [
  {
    name: 'Artists',
    description:
      'The legends of Argentine rock and what each recorded: list, read, add and replace artists; list, read and add their albums.',
  },
  { name: 'Events', description: 'The changes of the catalogue as they happen, as Server-Sent Events.' },
  {
    name: 'Authentication',
    description:
      'Sign up, log in for a bearer token, and manage your personal API keys. Everything here but sign-up and login acts for the signed-in user.',
  },
  {
    name: 'Fixtures',
    description:
      'Only on a server started with --fixtures, for test suites, and only with a service key: namespaces (a catalogue per `Rock-Legends-Namespace` header), the request journal, faults on demand, and state in and out. Each acts on the namespace of the request.',
  },
]
