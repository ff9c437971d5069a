import fc from 'fast-check'
import type { Schema } from '../../src/docs/shapes.ts'
import type { OperationSpec, ParamSpec } from './operations.ts'

// Generators of requests, derived from the served OpenAPI document: each parameter and body property gets values
// the document calls valid and values it calls invalid (checked with ajv against the document's own schemas, so
// the generators cannot drift from it), and whole requests are built from them.

const INT64_MAX = 9223372036854775807n

/** Who a request claims to be; resolved to headers against the live credentials of the world it runs in. */
export type Credential =
  | 'none'
  | 'service'
  | 'token'
  | 'key'
  // A personal key sent as a bearer token: good too (DESIGN.md).
  | 'key-as-bearer'
  // Bad ones: each must be refused like no credential at all.
  | 'revoked-token'
  | 'token-as-api-key'
  | 'near-service-key'
  | 'other-service-key'
  | { authorization?: string; 'x-api-key'?: string }

/** A body as sent: its bytes (or text) and Content-Type. */
export interface SentBody {
  text: string | Uint8Array
  contentType?: string
  /** What the server's body parser must say before anything else looks at the request. */
  parse: 'ok' | 'too-large' | 'not-json' | 'malformed' | 'not-an-object' | 'forbidden-key'
}

/** One generated request, and what its generator made it to be. */
export interface Plan {
  operation: OperationSpec
  /** Path parameter values, unencoded. */
  path: Record<string, string>
  /** Query parameters, unencoded, in order (a name may repeat). */
  query: [string, string][]
  credential: Credential
  body?: SentBody
  headers: [string, string][]
  /** `valid`: everything the document asks for; `invalid`: one part breaks it; `anonymous`: a write without a valid credential. */
  kind: 'valid' | 'invalid' | 'anonymous'
  /** What was broken, for failure messages. */
  broken?: string
}

// ---------------------------------------------------------------------------------------------------------------
// Parameters

/** The largest value the server accepts for a parameter. `limit` is documented as 1–100, but larger values are
 * accepted and lowered to 100 (docs/design-decisions.md), so they are valid here too. */
const acceptedMaximum = (param: ParamSpec) =>
  param.name === 'limit' || param.schema.maximum === undefined ? INT64_MAX : BigInt(param.schema.maximum as number)

const minimumOf = (param: ParamSpec) => BigInt((param.schema.minimum as number | undefined) ?? 0)

/** Valid values of a parameter that is not an integer: one of its `enum` (`sort`), or text within its `maxLength` (`q`). */
function validTextParam(param: ParamSpec): fc.Arbitrary<string> {
  const options = param.schema.enum as string[] | undefined
  if (options) return fc.constantFrom(...options)
  return fc.string({ unit: 'grapheme', maxLength: Math.min((param.schema.maxLength as number | undefined) ?? 20, 20) })
}

/** Values of a parameter that is not an integer that the document must refuse: outside its `enum`, or too long. */
function invalidTextParam(param: ParamSpec): fc.Arbitrary<string> {
  const options = param.schema.enum as string[] | undefined
  if (options) return fc.string({ maxLength: 8 }).filter((text) => !options.includes(text))
  const longest = param.schema.maxLength as number
  return fc.string({ minLength: longest + 1, maxLength: longest + 40 })
}

/** Valid values of an integer parameter: mostly small (ids that exist), with the boundaries and the whole range. */
export function validParam(param: ParamSpec): fc.Arbitrary<string> {
  if (param.schema.type !== 'integer') return validTextParam(param)
  const min = minimumOf(param)
  const max = acceptedMaximum(param)
  const documentedMax = param.schema.maximum === undefined ? max : BigInt(param.schema.maximum as number)
  return fc
    .oneof(
      { weight: 8, arbitrary: fc.bigInt({ min, max: min + 14n }) },
      { weight: 2, arbitrary: fc.constantFrom(min, documentedMax, max, documentedMax + 1n) },
      { weight: 2, arbitrary: fc.bigInt({ min, max }) },
    )
    .filter((value) => value >= min && value <= max)
    .map(String)
}

const MALFORMED_INTEGERS = [
  'abc',
  '1.5',
  '1.0',
  '1e3',
  '01',
  '00',
  '+1',
  '-1',
  '-0',
  '0x10',
  '1_000',
  '1,2',
  ' 1',
  '1 ',
  '١',
  '１',
  '²',
  '∞',
  'NaN',
  'Infinity',
  'null',
  'true',
  '[]',
  '{}',
  '%',
  '\u0000',
  '1\n',
  '9'.repeat(400),
  '😀',
]

/** Values of a parameter that the document (and so the server) must refuse. */
export function invalidParam(param: ParamSpec): fc.Arbitrary<string> {
  if (param.schema.type !== 'integer') return invalidTextParam(param)
  const min = minimumOf(param)
  const max = acceptedMaximum(param)
  const canonical = /^(?:0|[1-9]\d*)$/
  const outOfRange = [min - 1n, max + 1n, -9223372036854775808n, 18446744073709551616n].filter(
    (value) => value < min || value > max,
  )
  return fc
    .oneof(
      fc.constantFrom(...MALFORMED_INTEGERS),
      fc.constantFrom(...outOfRange.map(String)),
      fc.string({ unit: 'binary', maxLength: 12 }),
      fc.double({ noInteger: true }).map(String),
    )
    .filter((text) => {
      if (canonical.test(text) && BigInt(text) >= min && BigInt(text) <= max) return false
      // An empty or dot segment would change the route itself rather than the parameter.
      return param.in === 'query' || (text !== '' && text !== '.' && text !== '..')
    })
}

// ---------------------------------------------------------------------------------------------------------------
// Body values

const typesOf = (schema: Schema): string[] =>
  Array.isArray(schema.type) ? (schema.type as string[]) : schema.type ? [schema.type as string] : []

const within = (length: number, schema: Schema) =>
  length >= ((schema.minLength as number | undefined) ?? 0) &&
  length <= ((schema.maxLength as number | undefined) ?? Infinity)

/**
 * Whether the server and the document count the length of `value` alike. JSON Schema counts code points; the
 * server (TypeBox, like JavaScript) counts UTF-16 code units, in which a character outside the BMP, such as most
 * emoji, counts twice. Near a bound the two can disagree (four emoji pass the server's 8-character password
 * minimum; 150 emoji fail its 200-character name maximum), a known difference the generators stay clear of.
 */
export const lengthsAgree = (schema: Schema, value: unknown) =>
  typeof value !== 'string' || within(value.length, schema) === within([...value].length, schema)

/** Valid strings of a schema, by both ways of counting their length (see {@link lengthsAgree}). */
export function validString(schema: Schema): fc.Arbitrary<string> {
  const min = (schema.minLength as number | undefined) ?? 0
  const max = (schema.maxLength as number | undefined) ?? 10_000
  const pattern = typeof schema.pattern === 'string' ? new RegExp(schema.pattern, 'u') : undefined
  const fits = (text: string) =>
    within(text.length, schema) && within([...text].length, schema) && (!pattern || pattern.test(text))
  let matching: fc.Arbitrary<string>
  try {
    matching = pattern ? fc.stringMatching(pattern) : fc.string({ unit: 'binary', maxLength: 40 })
  } catch {
    // fast-check cannot generate from every pattern (lookaheads); URLs and paths cover the image pattern.
    matching = fc.oneof(
      fc.webUrl({ withQueryParameters: true, withFragments: true }),
      fc.string({ unit: 'grapheme', maxLength: 30 }).map((text) => `/${text.replace(/\s/gu, '')}`),
    )
  }
  // The longest valid value: a valid one padded with plain letters, where the pattern allows it.
  const longest = matching.map((text) => {
    if (text.length >= max) return text
    const padding = 'a'.repeat(max - text.length)
    return pattern && !pattern.test(text + padding) ? padding + text : text + padding
  })
  return fc
    .oneof(
      { weight: 6, arbitrary: matching },
      { weight: 2, arbitrary: fc.string({ unit: 'binary', minLength: min, maxLength: Math.min(max, 60) }) },
      { weight: 1, arbitrary: fc.string({ unit: 'grapheme', minLength: min, maxLength: Math.min(max, 60) }) },
      { weight: 1, arbitrary: longest },
    )
    .filter(fits)
}

/** Valid values of one body property. */
export function validValue(schema: Schema): fc.Arbitrary<unknown> {
  // A choice (an album's kind): one of its values, null among them when the property may be null.
  if (Array.isArray(schema.enum)) return fc.constantFrom(...(schema.enum as unknown[]))
  const options = typesOf(schema).map((type): fc.Arbitrary<unknown> => {
    switch (type) {
      case 'null':
        return fc.constant(null)
      case 'integer': {
        const min = (schema.minimum as number | undefined) ?? Number.MIN_SAFE_INTEGER
        const max = (schema.maximum as number | undefined) ?? Number.MAX_SAFE_INTEGER
        return fc.oneof(fc.integer({ min, max }), fc.constantFrom(min, max))
      }
      case 'string':
        return validString(schema)
      case 'boolean':
        return fc.boolean()
      default:
        throw new Error(`no generator for type ${type}`)
    }
  })
  return fc.oneof(...options)
}

const WRONG_VALUES: unknown[] = [
  1.5,
  42,
  -1,
  0,
  1e300,
  '',
  ' ',
  '\t\n',
  'x',
  '1973',
  true,
  false,
  null,
  [],
  {},
  ['a'],
  { a: 1 },
  'javascript:alert(1)',
  '//evil.example/x',
  'ftp://example.com/x',
  'http://',
  'http:// x',
  '/a b',
  'data:text/html,<script>alert(1)</script>',
  'no-at-sign',
  'a@b',
  '@b.c',
  'a@b.',
  'a@@b.c',
  'a b@c.d',
]

/** Values of one body property that its schema (ajv, over the document) refuses. */
export function invalidValue(schema: Schema, valid: (value: unknown) => boolean): fc.Arbitrary<unknown> {
  const specific: unknown[] = []
  if (typeof schema.maxLength === 'number') {
    specific.push('x'.repeat(schema.maxLength + 1), '😀'.repeat(schema.maxLength + 1))
  }
  if (typeof schema.minLength === 'number' && schema.minLength > 1) specific.push('x'.repeat(schema.minLength - 1))
  if (typeof schema.minimum === 'number') specific.push(schema.minimum - 1, schema.minimum + 0.5)
  if (typeof schema.maximum === 'number') specific.push(schema.maximum + 1)
  return fc
    .oneof(
      { weight: 3, arbitrary: fc.constantFrom(...WRONG_VALUES, ...specific) },
      { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 2 }) },
    )
    .filter((value) => !valid(value) && lengthsAgree(schema, value))
}

const FORBIDDEN_NAMES = ['constructor', 'prototype', 'toString', 'valueOf', 'hasOwnProperty', 'isAdmin', 'role']

/** A property name the schema does not know. */
const unknownKey = (schema: Schema) => {
  const known = new Set(Object.keys((schema.properties ?? {}) as object))
  return fc
    .oneof(
      fc.constantFrom(...FORBIDDEN_NAMES, 'ID', 'Name', 'name ', '', ' ', 'id\u0000', 'artistId', 'userId', 'admin'),
      fc.string({ unit: 'binary', maxLength: 12 }),
    )
    .filter((key) => !known.has(key) && key !== '__proto__')
}

/** Valid bodies of an object schema: every required property and any subset of the optional ones. */
export function validBody(schema: Schema, overrides: Record<string, fc.Arbitrary<unknown>> = {}) {
  const properties = (schema.properties ?? {}) as Record<string, Schema>
  const required = new Set((schema.required ?? []) as string[])
  const model: Record<string, fc.Arbitrary<unknown>> = {}
  for (const [name, property] of Object.entries(properties)) model[name] = overrides[name] ?? validValue(property)
  return fc.record(model, { requiredKeys: [...required] }) as fc.Arbitrary<Record<string, unknown>>
}

// ---------------------------------------------------------------------------------------------------------------
// Sent bodies

const MIB = 1024 * 1024

/** `body` (an object's JSON text) with `member` added first. */
const prepend = (body: string, member: string) => (body === '{}' ? `{${member}}` : `{${member},${body.slice(1)}`)

const JSON_TYPES = [
  'application/json',
  'application/json; charset=utf-8',
  'Application/JSON',
  'application/json;charset=UTF-8',
]
const OTHER_TYPES = [
  'text/plain',
  'text/json',
  'application/x-www-form-urlencoded',
  'multipart/form-data; boundary=x',
  'application/xml',
  'application/jsonx',
  'application/json-seq',
  'json',
  'application/octet-stream',
]

/** A JSON body of `value`, sent as JSON. */
export const asJson = (value: unknown, contentType = 'application/json'): SentBody => ({
  text: JSON.stringify(value),
  contentType,
  parse: typeof value === 'object' && value !== null && !Array.isArray(value) ? 'ok' : 'not-an-object',
})

/** A JSON Content-Type, spelled in any of the ways the server accepts. */
export const jsonType = fc.constantFrom(...JSON_TYPES)

/**
 * Bodies broken before any schema applies: wrong content types, malformed JSON, invalid UTF-8, a `__proto__` key at
 * any depth, nesting past 32 levels, JSON that is not an object, and more than 1 MiB.
 */
export function brokenBody(valid: fc.Arbitrary<Record<string, unknown>>): fc.Arbitrary<SentBody> {
  const text = valid.map((body) => JSON.stringify(body))
  const nest = (depth: number, inner: string) => `${'['.repeat(depth)}${inner}${']'.repeat(depth)}`
  return fc.oneof(
    fc.tuple(text, fc.constantFrom(...OTHER_TYPES, undefined)).map(([body, contentType]) => ({
      text: body,
      contentType,
      parse: 'not-json' as const,
    })),
    fc.tuple(text, fc.integer({ min: 0, max: 40 })).map(([body, cut]) => ({
      text: body.slice(0, Math.max(0, body.length - 1 - cut)),
      contentType: 'application/json',
      parse: 'malformed' as const,
    })),
    fc
      .constantFrom('{', '{"name":}', "{'name':'a'}", '{"name":"a",}', 'NaN', '{"name":"a"}{}', '\u0000', '   ')
      .map((body) => ({ text: body, contentType: 'application/json', parse: 'malformed' as const })),
    text.map((body) => ({
      text: new Uint8Array([...new TextEncoder().encode(body.slice(0, -2)), 0xff, 0xfe, 0x22, 0x7d]),
      contentType: 'application/json',
      parse: 'malformed' as const,
    })),
    fc
      .tuple(text, fc.integer({ min: 0, max: 3 }), fc.constantFrom('{"isAdmin":true}', '[]', 'null'))
      .map(([body, depth, inner]) => ({
        text: prepend(body, `"__proto__":${nest(depth, inner)}`),
        contentType: 'application/json',
        parse: 'forbidden-key' as const,
      })),
    fc.tuple(text, fc.integer({ min: 0, max: 20 })).map(([body, depth]) => ({
      text: prepend(body, `"nested":${nest(depth, '{"__proto__":{"polluted":true}}')}`),
      contentType: 'application/json',
      parse: 'forbidden-key' as const,
    })),
    fc.tuple(text, fc.integer({ min: 33, max: 5000 })).map(([body, depth]) => ({
      text: prepend(body, `"deep":${nest(depth, '1')}`),
      contentType: 'application/json',
      parse: 'forbidden-key' as const,
    })),
    fc
      .oneof(
        fc.array(fc.jsonValue({ maxDepth: 2 }), { maxLength: 3 }),
        fc.string({ maxLength: 20 }),
        fc.double({ noNaN: true, noDefaultInfinity: true }),
        fc.constantFrom(null, true, false),
      )
      .map((value) => ({
        text: JSON.stringify(value),
        contentType: 'application/json',
        parse: 'not-an-object' as const,
      })),
    fc.constantFrom(MIB + 1, 3 * MIB).map((size) => ({
      text: `{"name":"${'é'.repeat(Math.ceil(size / 2))}"}`,
      contentType: 'application/json',
      parse: 'too-large' as const,
    })),
    // Exactly 1 MiB: parsed, then refused by the schema (or by the credential check first).
    fc.constant({
      text: `{"name":"${'x'.repeat(MIB - 12)}"}`,
      contentType: 'application/json',
      parse: 'ok' as const,
    }),
  )
}

/**
 * Body texts with duplicated keys: JSON.parse keeps the last, and so must the verdict (ajv over the parsed value).
 */
export function duplicatedKeys(valid: fc.Arbitrary<Record<string, unknown>>, schema: Schema) {
  const names = Object.keys((schema.properties ?? {}) as object)
  const properties = (schema.properties ?? {}) as Record<string, Schema>
  const wrong = (name: string) => WRONG_VALUES.filter((value) => lengthsAgree(properties[name] ?? {}, value))
  return fc
    .tuple(valid, fc.constantFrom(...names), fc.nat(), fc.boolean())
    .map(([body, name, pick, wrongFirst]): [SentBody, unknown] => {
      const choices = wrong(name)
      const other = choices[pick % choices.length]
      const rest = JSON.stringify(body).slice(1)
      const first = `"${name}":${JSON.stringify(wrongFirst ? other : (body[name] ?? other))}`
      const text = rest === '}' ? `{${first}}` : `{${first},${rest}`
      return [{ text, contentType: 'application/json', parse: 'ok' }, JSON.parse(text)]
    })
}

// ---------------------------------------------------------------------------------------------------------------
// Headers and credentials

/** Credentials the document's schemes allow, for a request that should be let in. */
export function goodCredential(operation: OperationSpec): fc.Arbitrary<Credential> {
  const options: Credential[] = []
  if (operation.schemes.includes('bearer')) options.push('token')
  // A key as a bearer token where a key is accepted at all (logout, for one, ends a token's session only).
  if (operation.schemes.includes('apiKey'))
    options.push('service', 'key', ...(operation.schemes.includes('bearer') ? ['key-as-bearer' as const] : []))
  return options.length > 0 ? fc.constantFrom(...options) : fc.constant('none')
}

/** Credentials that must be refused: missing, malformed, unknown, revoked, or sent under the wrong scheme. */
export const badCredential: fc.Arbitrary<Credential> = fc.oneof(
  fc.constantFrom<Credential>(
    'none',
    'revoked-token',
    'token-as-api-key',
    'near-service-key',
    'other-service-key',
    { authorization: 'Bearer' },
    { authorization: 'Bearer ' },
    { authorization: 'Basic dXNlcjpwYXNzd29yZA==' },
    { authorization: 'Token rl_tok_abc' },
    { authorization: 'Bearer rl_tok_x, Bearer rl_tok_y' },
    { authorization: 'Bearer \u00e9\u00e9' },
    { 'x-api-key': '' },
    { 'x-api-key': '   ' },
    { 'x-api-key': 'rl_key_' },
    { 'x-api-key': 'null' },
    { 'x-api-key': 'undefined' },
    { authorization: '', 'x-api-key': 'test-service-key' },
  ),
  fc.stringMatching(/^rl_(tok|key)_[A-Za-z0-9]{32}$/).map((secret) => ({ authorization: `Bearer ${secret}` })),
  fc.stringMatching(/^rl_key_[A-Za-z0-9]{32}$/).map((secret) => ({ 'x-api-key': secret })),
  fc.string({ unit: 'grapheme-ascii', maxLength: 60 }).map((secret) => ({ 'x-api-key': secret })),
)

/** Headers a request may carry that must change nothing: unknown, spoofed, odd or long ones. */
export const oddHeaders: fc.Arbitrary<[string, string][]> = fc.subarray(
  [
    ['x-forwarded-for', '10.0.0.1, 203.0.113.7'],
    ['x-real-ip', '203.0.113.7'],
    ['origin', 'https://evil.example'],
    ['x-request-id', '../../etc/passwd'],
    ['x-request-id', 'x'.repeat(300)],
    // Accepts JSON, if least of all: a header that excludes it is 406 (test/http/media-types.test.ts).
    ['accept', 'application/xml, application/json;q=0.1'],
    ['accept', 'text/html;q=0.9, */*;q=0.1'],
    ['accept-encoding', 'gzip, br'],
    ['accept-language', 'es-AR'],
    ['x-http-method-override', 'DELETE'],
    ['x-method-override', 'PUT'],
    ['cookie', 'session=admin; role=admin'],
    ['x-api-version', '2'],
    ['if-none-match', '*'],
    ['range', 'bytes=0-10'],
    ['x-long', 'y'.repeat(8 * 1024)],
    ['user-agent', '() { :; }; echo vulnerable'],
  ] as [string, string][],
  { maxLength: 4 },
)

// ---------------------------------------------------------------------------------------------------------------
// Whole requests

const pathParams = (operation: OperationSpec) => operation.params.filter((param) => param.in === 'path')
const queryParams = (operation: OperationSpec) => operation.params.filter((param) => param.in === 'query')

function validPath(operation: OperationSpec) {
  const model: Record<string, fc.Arbitrary<string>> = {}
  for (const param of pathParams(operation)) model[param.name] = validParam(param)
  return fc.record(model)
}

function validQuery(operation: OperationSpec): fc.Arbitrary<[string, string][]> {
  const params = queryParams(operation)
  if (params.length === 0) return fc.constant([])
  return fc
    .tuple(...params.map((param) => fc.option(validParam(param), { nil: undefined })))
    .map((values) =>
      values.flatMap((value, i) =>
        value === undefined ? [] : [[(params[i] as ParamSpec).name, value] as [string, string]],
      ),
    )
}

/** The path parameter whose id a body's `id` must equal (or leave out), as the document's descriptions say. */
export const ID_IN_PATH: Record<string, string> = {
  updateArtist: 'artistId',
  patchArtist: 'artistId',
  updateAlbum: 'albumId',
  patchAlbum: 'albumId',
}

/** Valid bodies of an operation; a PUT's or PATCH's `id` is absent or the path's, as the document says. */
function validBodyOf(operation: OperationSpec, path: Record<string, string>) {
  const schema = operation.body as Schema
  const idParam = ID_IN_PATH[operation.operationId]
  if (idParam) {
    const id = Number(path[idParam])
    return validBody(schema, { id: fc.constant(id) }).map((body) => {
      if (!Number.isSafeInteger(id)) delete body.id
      return body
    })
  }
  return validBody(schema)
}

/** A request the document calls valid in every part, with a credential the operation accepts. */
export function validPlan(operation: OperationSpec): fc.Arbitrary<Plan> {
  return fc
    .record({
      path: validPath(operation),
      query: validQuery(operation),
      credential: goodCredential(operation),
      headers: oddHeaders,
    })
    .chain((plan) => {
      const body: fc.Arbitrary<SentBody | undefined> = operation.body
        ? fc.tuple(validBodyOf(operation, plan.path), jsonType).map(([value, type]) => asJson(value, type))
        : fc.constant(undefined)
      return body.map((sent): Plan => ({ ...plan, operation, body: sent, kind: 'valid' }))
    })
}

/** A request with exactly one part that the document (or the body parser) refuses, and a good credential. */
export function invalidPlan(operation: OperationSpec): fc.Arbitrary<Plan> {
  return validPlan(operation).chain((plan) => {
    const mutations: fc.Arbitrary<Plan>[] = []
    for (const param of pathParams(operation))
      mutations.push(
        invalidParam(param).map((value) => ({
          ...plan,
          path: { ...plan.path, [param.name]: value },
          broken: `path ${param.name}=${JSON.stringify(value)}`,
        })),
      )
    for (const param of queryParams(operation)) {
      mutations.push(
        invalidParam(param).map((value) => ({
          ...plan,
          query: [...plan.query.filter(([name]) => name !== param.name), [param.name, value]],
          broken: `query ${param.name}=${JSON.stringify(value)}`,
        })),
      )
      // Unknown parameters are ignored (a cache-buster's `_=…`), but a known one given twice is refused.
      mutations.push(
        fc.tuple(fc.string(), fc.string()).map(([first, second]) => ({
          ...plan,
          query: [...plan.query.filter(([name]) => name !== param.name), [param.name, first], [param.name, second]],
          broken: `query ${param.name} given twice`,
        })),
      )
    }
    const schema = operation.body
    if (schema && plan.body) {
      const body = JSON.parse(plan.body.text as string) as Record<string, unknown>
      const properties = (schema.properties ?? {}) as Record<string, Schema>
      for (const name of (schema.required ?? []) as string[]) {
        const { [name]: _, ...rest } = body
        mutations.push(fc.constant({ ...plan, body: asJson(rest), broken: `missing ${name}` }))
      }
      for (const [name, property] of Object.entries(properties))
        mutations.push(
          invalidValue(property, operation.propertyValid[name] as (value: unknown) => boolean).map((value) => ({
            ...plan,
            body: asJson({ ...body, [name]: value }),
            broken: `${name}=${JSON.stringify(value)?.slice(0, 80)}`,
          })),
        )
      mutations.push(
        fc.tuple(unknownKey(schema), fc.jsonValue({ maxDepth: 2 })).map(([key, value]) => ({
          ...plan,
          body: asJson({ ...body, [key]: value }),
          broken: `unknown property ${JSON.stringify(key)}`,
        })),
      )
      mutations.push(
        brokenBody(fc.constant(body)).map((sent) => ({ ...plan, body: sent, broken: `body ${sent.parse}` })),
      )
    }
    if (!schema && operation.method === 'POST')
      // An operation without a body still parses one if it is sent: it must be JSON.
      mutations.push(
        brokenBody(fc.constant({}))
          .filter((sent) => sent.parse !== 'ok' && sent.parse !== 'not-an-object' && sent.parse !== 'forbidden-key')
          .map((sent) => ({ ...plan, body: sent, broken: `body ${sent.parse}` })),
      )
    if (mutations.length === 0) return fc.constant(plan)
    return fc.oneof(...mutations).map((mutated): Plan => ({ ...mutated, kind: 'invalid' }))
  })
}

/** A write without a valid credential, whatever its parameters and body (valid or not). */
export function anonymousPlan(operation: OperationSpec): fc.Arbitrary<Plan> {
  return fc
    .tuple(fc.oneof(validPlan(operation), invalidPlan(operation)), badCredential)
    .map(([plan, credential]): Plan => ({ ...plan, credential, kind: 'anonymous' }))
}

/** Builds the URL path and query of a plan, percent-encoding each value. */
export function urlOf(plan: Plan): string {
  const path = plan.operation.template.replace(/\{(\w+)\}/g, (_, name: string) =>
    encodeURIComponent(plan.path[name] ?? ''),
  )
  const query = plan.query.map(([name, value]) => `${encodeURIComponent(name)}=${encodeURIComponent(value)}`).join('&')
  return query ? `${path}?${query}` : path
}
