import Ajv2020 from 'ajv/dist/2020.js'
import addFormats from 'ajv-formats'
import fc from 'fast-check'
import type { OpenApiDocument, Schema } from '../../src/docs/shapes.ts'

/** A path or query parameter of an operation, as the document describes it. */
export interface ParamSpec {
  name: string
  in: 'path' | 'query'
  required: boolean
  schema: Schema
}

/** One operation of the served document, in the form the generators need. */
export interface OperationSpec {
  operationId: string
  method: string
  /** The path template, e.g. `/api/v1/artists/{artistId}`. */
  template: string
  tag: string
  /** The credentials the document accepts (`bearer`, `apiKey`); empty for a public operation. */
  schemes: ('bearer' | 'apiKey')[]
  params: ParamSpec[]
  /** The JSON request body's schema, `$ref`s resolved. */
  body?: Schema
  /** The document's verdict on a body: ajv over the body schema. */
  bodyValid?: (value: unknown) => boolean
  /** The document's verdict on each body property, for the generators of invalid values. */
  propertyValid: Record<string, (value: unknown) => boolean>
  /** The statuses the document lists. */
  statuses: number[]
}

const resolve = (document: OpenApiDocument, schema: Schema): Schema => {
  const ref = schema.$ref
  if (typeof ref !== 'string') return schema
  const name = ref.replace('#/components/schemas/', '')
  const target = document.components.schemas[name]
  if (!target) throw new Error(`unresolved ${ref}`)
  return target
}

/**
 * Every operation of the served document with its parameters, body schema and credentials, and ajv validators
 * compiled from the document's own schemas: the oracle the server's answers are compared with.
 */
export function operationsOf(document: OpenApiDocument): OperationSpec[] {
  const ajv = new Ajv2020({ strict: false, allErrors: false })
  addFormats(ajv)
  const schemeOf: Record<string, 'bearer' | 'apiKey'> = { bearerAuth: 'bearer', apiKeyHeader: 'apiKey' }
  const operations: OperationSpec[] = []
  for (const [template, methods] of Object.entries(document.paths))
    for (const [method, operation] of Object.entries(methods)) {
      // The event stream never ends, so no answer of it can be read whole: test/events/ tries to break it.
      if (operation.operationId === 'streamEvents') continue
      const schemes = (operation.security ?? document.security).flatMap((alternative) =>
        Object.keys(alternative).map((name) => schemeOf[name] as 'bearer' | 'apiKey'),
      )
      const params = (operation.parameters ?? []).map((parameter) => ({
        name: parameter.name,
        in: parameter.in as 'path' | 'query',
        required: parameter.required === true,
        schema: parameter.schema,
      }))
      const media = operation.requestBody?.content['application/json']?.schema
      const body = media && resolve(document, media)
      const properties = (body?.properties ?? {}) as Record<string, Schema>
      operations.push({
        operationId: operation.operationId,
        method: method.toUpperCase(),
        template,
        tag: operation.tags?.[0] ?? '',
        schemes,
        params,
        body,
        bodyValid: body && ajv.compile(body),
        propertyValid: Object.fromEntries(
          Object.entries(properties).map(([name, schema]) => [name, ajv.compile(schema)]),
        ),
        statuses: Object.keys(operation.responses).map(Number),
        // Counterexamples name the operation instead of printing its schemas and validators.
        [fc.toStringMethod]: () => operation.operationId,
      } as OperationSpec)
    }
  return operations
}

/** Whether `operation` changes anything when it succeeds (every documented write asks for a body or credentials). */
export const isWrite = (operation: OperationSpec) => operation.method !== 'GET'
