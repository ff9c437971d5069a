import { deepEquals } from '#runtime'
import { ProblemDetails } from '../http/responses.ts'
import { Album } from '../model/album.ts'
import { Artist, ArtistInput, ArtistPatch } from '../model/artist.ts'
import { ApiKey, NewApiKey } from '../model/credential.ts'
import { PublicUser, Session } from '../model/user.ts'
import type { Paths, Schema } from './shapes.ts'

/** The schemas the document names in `components`, so that each is described once and referred to everywhere. */
export const namedSchemas = {
  Artist,
  Album,
  ArtistInput,
  ArtistPatch,
  User: PublicUser,
  Session,
  ApiKey,
  NewApiKey,
  Problem: ProblemDetails,
}

const isObject = (value: unknown): value is Schema => typeof value === 'object' && value !== null

// Routes use the schemas themselves, so the generator writes them out in full; a copy that differs only in its
// description (the answer's, see `described`) is the same schema.
const withoutDescription = ({ description: _, ...rest }: Schema) => rest

const inside = (value: Schema, components: [string, Schema][]) =>
  Object.fromEntries(Object.entries(value).map(([key, nested]) => [key, replaceCopies(nested, components)]))

function replaceCopies(value: unknown, components: [string, Schema][]): unknown {
  if (Array.isArray(value)) return value.map((item) => replaceCopies(item, components))
  if (!isObject(value)) return value
  const bare = withoutDescription(value)
  const match = components.find(([, schema]) => deepEquals(bare, schema))
  return match ? { $ref: `#/components/schemas/${match[0]}` } : inside(value, components)
}

/**
 * Replaces every copy of a named schema, in the request and response bodies of `paths` and inside the named schemas
 * themselves, with a reference to it.
 */
export function referToComponents(paths: Paths, schemas: Record<string, Schema>): void {
  const components = Object.entries(schemas).map(([name, schema]): [string, Schema] => [
    name,
    withoutDescription(schema),
  ])
  for (const [name, schema] of Object.entries(schemas)) schemas[name] = inside(schema, components)
  for (const item of Object.values(paths))
    for (const operation of Object.values(item)) {
      for (const media of Object.values(operation.requestBody?.content ?? {}))
        if (media.schema) media.schema = replaceCopies(media.schema, components) as Schema
      for (const response of Object.values(operation.responses))
        for (const media of Object.values(response.content ?? {}))
          if (media.schema) media.schema = replaceCopies(media.schema, components) as Schema
    }
}
