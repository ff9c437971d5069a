// The parts of an OpenAPI 3.1 document that this folder builds and edits, typed only as far as it needs.

/** A JSON Schema (2020-12, as OpenAPI 3.1 uses it). */
export type Schema = { [keyword: string]: unknown }

/** A named example of a request or response body. */
export interface Example {
  summary?: string
  value: unknown
}

/** The body of one media type. */
export interface MediaType {
  schema?: Schema
  examples?: Record<string, Example>
}

/** A response header. */
export interface Header {
  description: string
  required?: boolean
  schema: Schema
}

/** One response of an operation. */
export interface Response {
  description: string
  headers?: Record<string, Header>
  content?: Record<string, MediaType>
}

/** A path or query parameter. */
export interface Parameter {
  name: string
  in: 'path' | 'query' | 'header' | 'cookie'
  required?: boolean
  description?: string
  schema: Schema
}

/** Alternatives, each naming the security schemes it needs (`[]` for none). */
export type Security = Record<string, string[]>[]

/** One operation: a method on a path. */
export interface Operation {
  operationId: string
  summary?: string
  description?: string
  tags?: string[]
  deprecated?: boolean
  security?: Security
  parameters?: Parameter[]
  requestBody?: { description?: string; required?: boolean; content: Record<string, MediaType> }
  responses: Record<string, Response>
}

/** Operations by path, then by lower-case method. */
export type Paths = Record<string, Record<string, Operation>>

/** The whole document. */
export interface OpenApiDocument {
  openapi: string
  info: { title: string; version: string; description: string; license?: { name: string; identifier: string } }
  servers: { url: string; description?: string }[]
  security: Security
  tags: { name: string; description: string }[]
  paths: Paths
  components: {
    schemas: Record<string, Schema>
    parameters: Record<string, Parameter>
    responses: Record<string, Response>
    securitySchemes: Record<string, Schema>
  }
}
