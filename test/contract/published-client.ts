import Ajv2020, { type ValidateFunction } from 'ajv/dist/2020.js'
import addFormats from 'ajv-formats'
import published from './argentine-rock-legends.openapi.json' with { type: 'json' }

/** One operation of the published document. */
interface PublishedOperation {
  method: string
  template: string
  secured: boolean
  statuses: string[]
}

/** What a generated client sends: path parameters, query parameters and a JSON body. */
export interface CallInput {
  path?: Record<string, string | number>
  query?: Record<string, string | number>
  body?: unknown
}

/** An answer, with whether the published document lists its status. */
export interface PublishedAnswer {
  status: number
  text: string
  json: unknown
  /** False when the published document does not list this status for the operation (it must then be in ours). */
  listed: boolean
}

const DOCUMENT_ID = 'published.json'
const segment = (text: string) => encodeURIComponent(text.replaceAll('~', '~0').replaceAll('/', '~1'))

/** The published document's operations by `operationId`. */
export const publishedOperations = new Map<string, PublishedOperation>()
for (const [template, item] of Object.entries(published.paths))
  for (const [method, operation] of Object.entries(item) as [string, Record<string, unknown>][]) {
    const security = (operation.security ?? published.security) as unknown[]
    publishedOperations.set(operation.operationId as string, {
      method: method.toUpperCase(),
      template,
      // `[{}]` (or an empty list) means no credentials are needed.
      secured: security.some((alternative) => Object.keys(alternative as object).length > 0),
      statuses: Object.keys(operation.responses as object),
    })
  }

/**
 * Validates bodies against the published document's schemas, strictly: `nullable`, an OpenAPI 3.0 keyword, means
 * nothing in 3.1, so a null where a string is declared fails, as it does in a client generated from the document.
 */
const ajv = new Ajv2020({ strict: false, allErrors: true })
addFormats(ajv)
ajv.addSchema(published as object, DOCUMENT_ID)
const validators = new Map<string, ValidateFunction>()

function validator(operation: PublishedOperation, status: string): ValidateFunction {
  const pointer = ['paths', operation.template, operation.method.toLowerCase(), 'responses', status, 'content']
  const ref = `${DOCUMENT_ID}#/${[...pointer, 'application/json', 'schema'].map(segment).join('/')}`
  let validate = validators.get(ref)
  if (!validate) {
    validate = ajv.compile({ $ref: ref })
    validators.set(ref, validate)
  }
  return validate
}

/** Throws unless `json` matches the schema the published document gives `operationId`'s answer with `status`. */
export function expectPublishedShape(operationId: string, status: number, json: unknown, context: string): void {
  const operation = publishedOperations.get(operationId)
  if (!operation) throw new Error(`the published document has no operation ${operationId}`)
  const validate = validator(operation, String(status))
  if (!validate(json))
    throw new Error(
      `${context} → ${status} breaks the published document (${operationId}): ${ajv.errorsText(validate.errors)}\n${JSON.stringify(json).slice(0, 400)}`,
    )
}

/**
 * A client as one generated from the published document behaves: it knows operations by id, fills in their path
 * and query, sends credentials where the document asks for them, and reads every answer with the document's schema
 * for its status. `send` delivers a request (in-process or over HTTP) and returns the response.
 */
export function publishedClient(send: (request: Request) => Promise<Response>, apiKey: string) {
  return async function call(operationId: string, input: CallInput = {}): Promise<PublishedAnswer> {
    const operation = publishedOperations.get(operationId)
    if (!operation) throw new Error(`the published document has no operation ${operationId}`)
    const path = operation.template.replace(/\{(\w+)\}/g, (_, name: string) => String(input.path?.[name]))
    const query = new URLSearchParams(
      Object.entries(input.query ?? {}).map(([name, value]): [string, string] => [name, String(value)]),
    ).toString()
    const headers: Record<string, string> = { accept: 'application/json' }
    if (operation.secured) headers['x-api-key'] = apiKey
    if (input.body !== undefined) headers['content-type'] = 'application/json'
    const url = `http://localhost${path}${query ? `?${query}` : ''}`
    const response = await send(
      new Request(url, {
        method: operation.method,
        headers,
        body: input.body === undefined ? undefined : JSON.stringify(input.body),
      }),
    )
    const text = await response.text()
    const json = text ? JSON.parse(text) : undefined
    const listed = operation.statuses.includes(String(response.status))
    if (listed) expectPublishedShape(operationId, response.status, json, `${operation.method} ${path}`)
    return { status: response.status, text, json, listed }
  }
}
