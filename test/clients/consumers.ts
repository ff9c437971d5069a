// The code other teams write against a generated client, as source text: each is compiled with `tsc` beside a client
// generated from the published document and beside one generated from our `/openapi.json`, unchanged, and run
// with Node against a running server. Text rather than files of this folder, because the project's own type-check
// would look for the generated clients they import.

/** What every consumer prints: what the server answered, as the generated client read it. */
export interface Seen {
  total: number | undefined
  first: string
  artist: string | undefined
  created: { status: number | undefined; id: number | undefined; name: string | undefined }
  user: { status: number | undefined; email: string | undefined }
  albums: string[] | undefined
  missing: { status: number | undefined; problem: number | undefined; detail: string | undefined }
  deleted: { status: number | undefined; problem: number | undefined; detail: string | undefined }
}

// Declared in each consumer, so that none needs @types/node.
const node = `// Node's, declared here so that the consumer needs no @types/node.
declare const process: { argv: string[]; exitCode?: number }`

const report = (call: string) => `
${call}.then(
  (seen) => console.log(JSON.stringify(seen)),
  (error: unknown) => {
    console.error(error)
    process.exitCode = 1
  },
)
`

/**
 * Through the SDK that @hey-api/openapi-ts generated into `./client`, with no base URL configured: the client takes
 * it from the document's `servers`. Arguments: an API key, an email to sign up with.
 */
export const heyApiConsumer = `import {
  type Artist,
  createArtist,
  createUser,
  deleteArtist,
  type Error as ProblemBody,
  getAllAlbums,
  getAllArtists,
  getArtist,
  type NewUser,
  type PaginatedResource,
} from './client'

${node}

async function main(key: string, email: string) {
  const page = await getAllArtists({ query: { limit: 2 } })
  const meta: PaginatedResource['meta'] = page.data?.meta
  const first: Artist | undefined = page.data?.data?.[0]
  if (!first) throw new Error(\`no artists: \${String(page.error ?? page.response?.status)}\`)
  const artist = await getArtist({ path: { artistId: first.id } })
  // The published document's body for a new artist is an Artist, id and all.
  const created = await createArtist({ auth: key, body: { id: 0, name: 'Pappo', band: 'Riff' } })
  const newUser: NewUser = { name: 'Consumer', email, password: 'i-love-rock' }
  const user = await createUser({ body: newUser })
  const albums = await getAllAlbums({ path: { artistId: first.id }, query: { limit: 3 } })
  const missing = await getArtist({ path: { artistId: 987654 } })
  const problem: ProblemBody | undefined = missing.error
  // Deprecated: no success answer at all, only problems.
  const deleted = await deleteArtist({ auth: key, path: { artistId: first.id } })
  const deprecated: ProblemBody | undefined = deleted.error
  return {
    total: meta?.total,
    first: first.name,
    artist: artist.data?.name,
    created: { status: created.response?.status, id: created.data?.id, name: created.data?.name },
    user: { status: user.response?.status, email: user.data?.email },
    albums: albums.data?.data?.map((album) => album.name),
    missing: { status: missing.response?.status, problem: problem?.status, detail: problem?.detail },
    deleted: { status: deleted.response?.status, problem: deprecated?.status, detail: deprecated?.detail },
  }
}
${report("main(process.argv[2] ?? '', process.argv[3] ?? '')")}`

/**
 * Through openapi-fetch, typed by what openapi-typescript generated into `./schema.ts`. openapi-fetch never reads
 * the document's `servers`: the base URL is always given. Arguments: the base URL, an API key, an email.
 */
export const openapiFetchConsumer = `import createClient from 'openapi-fetch'
import type { components, paths } from './schema'

${node}

type Artist = components['schemas']['Artist']
type NewUser = components['schemas']['NewUser']
type PaginatedResource = components['schemas']['PaginatedResource']
type ProblemBody = components['schemas']['Error']

async function main(baseUrl: string, key: string, email: string) {
  const client = createClient<paths>({ baseUrl })
  const page = await client.GET('/api/v1/artists', { params: { query: { limit: 2 } } })
  const meta: PaginatedResource['meta'] = page.data?.meta
  const first: Artist | undefined = page.data?.data?.[0]
  if (!first) throw new Error(\`no artists (\${page.response.status})\`)
  const artist = await client.GET('/api/v1/artists/{artistId}', { params: { path: { artistId: first.id } } })
  const created = await client.POST('/api/v1/artists', {
    headers: { 'X-API-Key': key },
    body: { id: 0, name: 'Pappo', band: 'Riff' },
  })
  const newUser: NewUser = { name: 'Consumer', email, password: 'i-love-rock' }
  const user = await client.POST('/api/v1/user/signup', { body: newUser })
  const albums = await client.GET('/api/v1/artists/{artistId}/albums', {
    params: { path: { artistId: first.id }, query: { limit: 3 } },
  })
  const missing = await client.GET('/api/v1/artists/{artistId}', { params: { path: { artistId: 987654 } } })
  const problem: ProblemBody | undefined = missing.error
  const deleted = await client.DELETE('/api/v1/artists/{artistId}', {
    headers: { 'X-API-Key': key },
    params: { path: { artistId: first.id } },
  })
  const deprecated: ProblemBody | undefined = deleted.error
  return {
    total: meta?.total,
    first: first.name,
    artist: artist.data?.name,
    created: { status: created.response.status, id: created.data?.id, name: created.data?.name },
    user: { status: user.response.status, email: user.data?.email },
    albums: albums.data?.data?.map((album) => album.name),
    missing: { status: missing.response.status, problem: problem?.status, detail: problem?.detail },
    deleted: { status: deleted.response.status, problem: deprecated?.status, detail: deprecated?.detail },
  }
}
${report("main(process.argv[2] ?? '', process.argv[3] ?? '', process.argv[4] ?? '')")}`

/** What `noBodyConsumer` prints. */
export interface NoBodySeen {
  login: number | undefined
  logout: { status: number | undefined; data: unknown; error: unknown }
  again: { status: number | undefined; problem: number | undefined; detail: string | undefined }
  revoke: { status: number | undefined; problem: number | undefined; detail: string | undefined }
}

/**
 * The operations of ours alone whose success has no body (logout, key revocation), through the hey-api SDK: each
 * problem they answer must be readable as such. Arguments: the email and password of an account.
 */
export const noBodyConsumer = `import { loginUser, logoutUser, type Problem, revokeApiKey } from './client'

${node}

async function main(email: string, password: string) {
  const login = await loginUser({ body: { email, password } })
  const token = login.data?.token ?? ''
  const logout = await logoutUser({ auth: token })
  const again = await logoutUser({ auth: token })
  const stale: Problem | undefined = again.error
  const second = await loginUser({ body: { email, password } })
  const revoke = await revokeApiKey({ auth: second.data?.token ?? '', path: { id: 987654 } })
  const missing: Problem | undefined = revoke.error
  return {
    login: login.response?.status,
    logout: { status: logout.response?.status, data: logout.data ?? null, error: logout.error ?? null },
    again: { status: again.response?.status, problem: stale?.status, detail: stale?.detail },
    revoke: { status: revoke.response?.status, problem: missing?.status, detail: missing?.detail },
  }
}
${report("main(process.argv[2] ?? '', process.argv[3] ?? '')")}`
