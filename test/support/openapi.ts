import Ajv2020, { type ValidateFunction } from 'ajv/dist/2020.js'
import addFormats from 'ajv-formats'
import { createApp } from '../../src/app.ts'
import type { OpenApiDocument, Operation, Response } from '../../src/docs/shapes.ts'
import { openMemoryStore } from '../../src/store/document/memory.ts'

const DOCUMENT_ID = 'openapi.json'

/** The document exactly as the server serves it at `/openapi.json`. */
export async function servedDocument(): Promise<OpenApiDocument> {
  const app = createApp({ store: openMemoryStore() })
  return (await app.handle(new Request('http://localhost/openapi.json'))).json() as Promise<OpenApiDocument>
}

// One JSON Pointer segment inside a URI fragment.
const segment = (text: string) => encodeURIComponent(text.replaceAll('~', '~0').replaceAll('/', '~1'))

interface Route {
  pattern: RegExp
  template: string
}

/** Checks answers against a document: each is compiled once, on first use. */
class DocumentChecker {
  readonly ajv = new Ajv2020({ strict: false, allErrors: true })
  private readonly routes: Route[]
  private readonly validators = new Map<string, ValidateFunction>()

  constructor(readonly document: OpenApiDocument) {
    addFormats(this.ajv)
    // Added whole, so that each response schema's `#/components/…` references resolve inside the document.
    this.ajv.addSchema(document as object, DOCUMENT_ID)
    this.routes = Object.keys(document.paths).map((template) => ({
      template,
      pattern: new RegExp(`^${template.replace(/\{[^}]+\}/g, '[^/]+')}$`),
    }))
  }

  /** The operation answering `method` on `path`, if the document has one. */
  operation(method: string, path: string): { template: string; operation: Operation } | undefined {
    const route = this.routes.find(({ pattern }) => pattern.test(path))
    const operation = route && this.document.paths[route.template]?.[method.toLowerCase()]
    return route && operation ? { template: route.template, operation } : undefined
  }

  /** The compiled schema of one documented response body. */
  validator(template: string, method: string, status: number, mediaType: string): ValidateFunction {
    const pointer = ['paths', template, method, 'responses', String(status), 'content', mediaType, 'schema']
    const ref = `${DOCUMENT_ID}#/${pointer.map(segment).join('/')}`
    let validate = this.validators.get(ref)
    if (!validate) {
      validate = this.ajv.compile({ $ref: ref })
      this.validators.set(ref, validate)
    }
    return validate
  }
}

let checker: Promise<DocumentChecker> | undefined
const checkers = new WeakMap<OpenApiDocument, DocumentChecker>()

/** An answer of the server, as a test received it. */
export interface Answer {
  method: string
  /** The path requested, with or without its query. */
  path: string
  status: number
  headers: Headers
  text: string
}

function fail(answer: Answer, operation: Operation, problem: string): never {
  throw new Error(
    `${answer.method} ${answer.path} → ${answer.status} does not match the OpenAPI document (${operation.operationId}): ${problem}\n${answer.text.slice(0, 500)}`,
  )
}

function checkHeaders(answer: Answer, operation: Operation, response: Response) {
  for (const [name, header] of Object.entries(response.headers ?? {}))
    if (header.required && !answer.headers.has(name)) fail(answer, operation, `the ${name} header is missing`)
}

/**
 * Throws unless `answer` is one the OpenAPI document allows: a status it lists for the operation, the headers it
 * requires, the media type and body it describes and, for problems, a `type` among those it shows. Answers outside
 * the document's operations (other methods, unknown routes, the documentation itself, covers) are not checked. The
 * document is the one a server with the default options serves, unless `document` is given (one with `--fixtures`
 * documents the fixture controls too).
 */
export async function expectDocumented(answer: Answer, document?: OpenApiDocument): Promise<void> {
  let documented: DocumentChecker
  if (document) {
    documented = checkers.get(document) ?? new DocumentChecker(document)
    checkers.set(document, documented)
  } else {
    checker ??= servedDocument().then((served) => new DocumentChecker(served))
    documented = await checker
  }
  const method = answer.method.toLowerCase()
  const found = documented.operation(method, answer.path.split('?', 1)[0] ?? '')
  if (!found) return
  const { template, operation } = found
  const response = operation.responses[answer.status]
  if (!response) fail(answer, operation, `status ${answer.status} is not documented`)
  checkHeaders(answer, operation, response)
  if (!response.content) {
    if (answer.text !== '') fail(answer, operation, 'the document says there is no body')
    return
  }
  const mediaType = answer.headers.get('content-type')?.split(';', 1)[0]?.trim() ?? ''
  const media = response.content[mediaType]
  if (!media) fail(answer, operation, `the media type ${mediaType || '(none)'} is not documented`)
  // A body of another type (an event stream's) is checked as the text it is.
  let body: unknown = answer.text
  if (/[/+]json$/.test(mediaType))
    try {
      body = JSON.parse(answer.text)
    } catch {
      fail(answer, operation, 'the body is not JSON')
    }
  const validate = documented.validator(template, method, answer.status, mediaType)
  if (!validate(body)) fail(answer, operation, documented.ajv.errorsText(validate.errors))
  if (mediaType === 'application/problem+json' && media.examples) {
    const types = Object.values(media.examples).map((example) => (example.value as { type?: unknown }).type)
    const { type } = body as { type?: unknown }
    if (!types.includes(type)) fail(answer, operation, `the problem type ${type} is not among those documented`)
  }
}
