import { deepEquals } from '#runtime'
import type { Operation, Paths, Schema } from './shapes.ts'

// Generated clients name their types after the document's components. A schema written inline in a request body or
// an answer gets a name the generator invents (`CreateAlbumBody`, one `…200Meta` per list), which changes whenever
// the generator or the route does, so every request body and every page of a list is a named component instead.

/**
 * The names of the request bodies that the routes do not name themselves. `NewUser` is the first published
 * document's name for the sign-up body; the others are new.
 */
const BODY_NAMES: Record<string, string> = {
  createAlbum: 'AlbumInput',
  updateAlbum: 'AlbumInput',
  patchAlbum: 'AlbumPatch',
  createUser: 'NewUser',
  loginUser: 'Credentials',
  createApiKey: 'ApiKeyInput',
}

/** The component that every page of a list is, besides its `data`; named as in the first published document. */
export const PAGE = 'PaginatedResource'
/** The `meta` of every page. */
export const PAGE_META = 'PageMeta'

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` })
const refName = (schema: Schema | undefined) =>
  typeof schema?.$ref === 'string' ? schema.$ref.replace('#/components/schemas/', '') : undefined

const pascal = (id: string) => (id[0] ?? '').toUpperCase() + id.slice(1)

const isObject = (value: unknown): value is Schema => typeof value === 'object' && value !== null

const withoutDescription = ({ description: _, ...rest }: Schema) => rest

/**
 * Adds `schema` under `name`, unless the same schema (but for its description, as `referToComponents` compares) is
 * there already; a different one of that name is a bug.
 */
function addComponent(schemas: Record<string, Schema>, name: string, schema: Schema): Schema {
  const existing = schemas[name]
  if (!existing) schemas[name] = schema
  else if (!deepEquals(withoutDescription(existing), withoutDescription(schema)))
    throw new Error(`Two different schemas would be named ${name} in /openapi.json`)
  return ref(name)
}

/** The name of an inline schema: its `title` if the route gave one (which stays as the title), else `fallback`. */
const nameOf = (schema: Schema, fallback: string) => (typeof schema.title === 'string' ? schema.title : fallback)

/** Whether `schema` is the envelope of a page of a list: `{ data: [...], meta: {...} }`, as `Paginated` writes it. */
function isPage(schema: Schema): schema is Schema & { properties: { data: Schema & { items: Schema }; meta: Schema } } {
  const properties = schema.properties
  if (schema.type !== 'object' || !isObject(properties)) return false
  const { data, meta } = properties as Record<string, unknown>
  return (
    Object.keys(properties).length === 2 &&
    isObject(data) &&
    data.type === 'array' &&
    isObject(data.items) &&
    isObject(meta) &&
    meta.type === 'object'
  )
}

/**
 * A page of `items` as a named component, `{ data: Item[], meta: PageMeta }`, both always there. It is also a
 * `PaginatedResource`, the first published document's page (`meta` optional, `data` left out), which stays that
 * wide so that code reading a page through that type compiles as it did. Items get a name too, when they have none.
 */
function namePage(page: Schema, operation: Operation, schemas: Record<string, Schema>): Schema {
  if (!isPage(page)) return page
  const { data, meta } = page.properties
  if (!schemas[PAGE_META]) {
    addComponent(schemas, PAGE_META, {
      description: 'Where a page is in its list, and the link to the next page.',
      ...withoutDescription(meta),
    })
    addComponent(schemas, PAGE, {
      description:
        'What every page of a list has besides its `data` (`ArtistPage`, `AlbumPage`, …): where it is in the list, and the next page. Named as in the first published document, where `meta` is optional.',
      type: 'object',
      properties: { meta: ref(PAGE_META) },
    })
  }
  if (!deepEquals(withoutDescription(schemas[PAGE_META] as Schema), withoutDescription(meta)))
    throw new Error(`The page of ${operation.operationId} has a meta of its own`)
  const item = refName(data.items) ?? nameOf(data.items, `${pascal(operation.operationId)}Item`)
  if (!refName(data.items)) addComponent(schemas, item, data.items)
  return addComponent(schemas, `${item}Page`, {
    description: `One page of a list of \`${item}\`, in the list's order.`,
    type: 'object',
    required: ['data', 'meta'],
    properties: { data: { type: 'array', items: ref(item) }, meta: ref(PAGE_META) },
  })
}

/**
 * Gives every request body and every page of a list of `paths` a component of its own in `schemas`, and refers to it
 * (run after `referToComponents`, which has already referred to the schemas named in `namedSchemas`), and names any
 * other answer whose schema has a `title`.
 */
export function nameInlineSchemas(paths: Paths, schemas: Record<string, Schema>): void {
  for (const item of Object.values(paths))
    for (const operation of Object.values(item)) {
      const body = operation.requestBody?.content['application/json']
      if (body?.schema && !refName(body.schema)) {
        const name = BODY_NAMES[operation.operationId] ?? nameOf(body.schema, `${pascal(operation.operationId)}Body`)
        body.schema = addComponent(schemas, name, body.schema)
      }
      for (const [status, response] of Object.entries(operation.responses)) {
        const media = response.content?.['application/json']
        if (!status.startsWith('2') || !media?.schema) continue
        media.schema = namePage(media.schema, operation, schemas)
        // An answer the route gave a title of its own is named by it too.
        if (!refName(media.schema) && typeof media.schema.title === 'string')
          media.schema = addComponent(schemas, media.schema.title, media.schema)
      }
    }
}
