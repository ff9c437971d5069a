import { beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test'
import { readFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import ts from 'typescript'
import { problemResponder } from '../../src/http/error-handler.ts'
import * as errors from '../../src/model/errors.ts'
import { DatabaseUnavailableError, StoreUnavailableError } from '../../src/store/store.ts'

// Errors become problems by two tables the compiler checks (src/http/domain-problem.ts for the refusals of the domain,
// src/http/error-handler.ts for the outages of the store): every kind answered, and each answered as before.

/** One of each refusal, and what it is answered with: status, problem type, headers and members. */
const REFUSALS: Record<string, [errors.DomainError, number, string, Record<string, string>, object?]> = {
  NotFoundError: [new errors.NotFoundError('There is no artist 7.'), 404, 'not-found', {}],
  ConflictError: [new errors.ConflictError('The email is taken.'), 409, 'conflict', {}],
  UnauthenticatedError: [
    new errors.UnauthenticatedError('The token has expired.'),
    401,
    'unauthorized',
    { 'www-authenticate': 'Bearer realm="rock-legends"' },
  ],
  CredentialNotAllowedError: [
    new errors.CredentialNotAllowedError('A service key acts for no user.'),
    403,
    'credential-not-allowed',
    {},
  ],
  NotPermittedError: [new errors.NotPermittedError('Sign-up is closed.'), 403, 'forbidden', {}],
  AccountDisabledError: [new errors.AccountDisabledError('The account is disabled.'), 403, 'account-disabled', {}],
  TooManyAttemptsError: [
    new errors.TooManyAttemptsError('Too many logins.', 7),
    429,
    'too-many-requests',
    { 'retry-after': '7' },
  ],
  InvalidFieldError: [
    new errors.InvalidFieldError('/id', 'must equal the id in the path.'),
    400,
    'validation-error',
    {},
    {
      detail: '/id: must equal the id in the path.',
      errors: [{ pointer: '/id', detail: 'must equal the id in the path.' }],
    },
  ],
  ChangedSinceReadError: [
    new errors.ChangedSinceReadError('Artist 7 changed since you read it.', '"q3ZCr0YdUuq1pW4pVfDgxw"'),
    412,
    'precondition-failed',
    { etag: '"q3ZCr0YdUuq1pW4pVfDgxw"' },
  ],
}

async function answer(error: unknown) {
  const reported: string[] = []
  const respond = problemResponder(
    () => [],
    (message) => reported.push(message),
  )
  const set: { status?: number } = {}
  const response = respond({ code: 'UNKNOWN', error, request: new Request('http://localhost/api/v1/artists'), set })
  expect(set.status).toBe(response.status)
  expect(response.headers.get('content-type')).toBe('application/problem+json')
  return { response, body: await response.json(), reported }
}

describe('each refusal of the domain', () => {
  test('is in this test, as every class of src/model/errors.ts is', () => {
    const classes = Object.entries(errors).filter(
      ([, value]) => typeof value === 'function' && value.prototype instanceof errors.DomainError,
    )
    expect(classes.map(([name]) => name).sort()).toEqual(Object.keys(REFUSALS).sort())
  })

  test.each(Object.entries(REFUSALS))('%s is answered as before', async (_, [error, status, kind, headers, body]) => {
    const { response, body: problem, reported } = await answer(error)
    expect(response.status).toBe(status)
    expect(problem).toMatchObject({ type: `/problems/${kind}`, status, detail: error.message, ...body })
    for (const [name, value] of Object.entries(headers)) expect(response.headers.get(name)).toBe(value)
    if (!headers['retry-after']) expect(response.headers.get('retry-after')).toBeNull()
    if (!headers['www-authenticate']) expect(response.headers.get('www-authenticate')).toBeNull()
    expect(reported).toEqual([])
  })
})

describe('each outage of the store', () => {
  test.each([
    [
      'DatabaseUnavailableError',
      'database-unavailable',
      '2',
      'The database is not reachable right now, so nothing was read or changed. Try again in a few seconds.',
      new DatabaseUnavailableError('the database at db.internal:5432 is unavailable'),
    ],
    [
      'StoreUnavailableError',
      'store-unavailable',
      '10',
      'The change could not be saved to disk, so it was not made. Try again later.',
      new StoreUnavailableError('the change could not be saved: ENOSPC'),
    ],
  ] as const)(
    '%s is a 503 %s with Retry-After %s, its cause in the log only',
    async (_, kind, retryAfter, detail, error) => {
      const { response, body, reported } = await answer(error)
      expect(response.status).toBe(503)
      expect(body).toMatchObject({ type: `/problems/${kind}`, status: 503, detail })
      expect(response.headers.get('retry-after')).toBe(retryAfter)
      expect(reported).toHaveLength(1)
      expect(reported[0]).toContain(error.message)
    },
  )
})

// The compiler's side: the project's own files, one of them changed in memory, type-checked by TypeScript.
const ROOT = resolve(import.meta.dir, '../..')
const ERRORS = join(ROOT, 'src/model/errors.ts')
const ANSWERS = join(ROOT, 'src/http/domain-problem.ts')
const HEADERS = join(ROOT, 'src/http/security-headers.ts')
const HEADERS_STUB = 'export const SECURITY_HEADERS: Record<string, string> = {}\n'

let previous: ts.Program | undefined

/** The diagnostics of `src/model/errors.ts` and `src/http/domain-problem.ts` with `errors.ts` as `edit` makes it. */
function diagnosticsWith(edit: (text: string) => string): string[] {
  const options: ts.CompilerOptions = {
    strict: true,
    noEmit: true,
    noImplicitOverride: true,
    allowImportingTsExtensions: true,
    module: ts.ModuleKind.Preserve,
    moduleResolution: ts.ModuleResolutionKind.Bundler,
    target: ts.ScriptTarget.ESNext,
    lib: ['lib.esnext.d.ts'],
    types: [],
    skipLibCheck: true,
  }
  const host = ts.createCompilerHost(options)
  const getSourceFile = host.getSourceFile
  host.getSourceFile = (file, language, ...rest) => {
    if (resolve(file) === ERRORS) return ts.createSourceFile(file, edit(readFileSync(ERRORS, 'utf8')), language)
    // Its Elysia plugin would pull in Elysia's types, hundreds of files that neither table needs.
    if (resolve(file) === HEADERS) return ts.createSourceFile(file, HEADERS_STUB, language)
    return getSourceFile.call(host, file, language, ...rest)
  }
  const program = ts.createProgram([ANSWERS], options, host, previous)
  // The next program reuses what did not change (the libraries above all).
  previous = program
  return [ERRORS, ANSWERS].flatMap((file) =>
    program
      .getSemanticDiagnostics(program.getSourceFile(file))
      .map(
        (diagnostic) =>
          `${file.slice(ROOT.length + 1)}: ${ts.flattenDiagnosticMessageText(diagnostic.messageText, ' ')}`,
      ),
  )
}

/** Three new refusals, as someone might add them: one listed in `Refusal`, one not listed, one without a kind. */
const NEW_REFUSALS = `
export class QuotaExceededError extends DomainError {
  override name = 'QuotaExceededError'
  override readonly kind = 'quota-exceeded'
}

export class UnlistedError extends DomainError {
  override name = 'UnlistedError'
  override readonly kind = 'unlisted'
}

export class BareError extends DomainError {}
`

describe('the compiler', () => {
  setDefaultTimeout(60_000)

  test('accepts the tables as they are', () => {
    expect(diagnosticsWith((text) => text)).toEqual([])
  })

  describe('refuses', () => {
    const listed = (text: string) =>
      text.replace('export type Refusal =\n', 'export type Refusal =\n  | QuotaExceededError\n')
    let diagnostics: string[] = []
    beforeAll(() => {
      diagnostics = diagnosticsWith((text) => listed(text) + NEW_REFUSALS)
    })

    test('a new kind of refusal that has no answer', () => {
      const [missing] = diagnostics.filter((line) => line.startsWith('src/http/domain-problem.ts'))
      expect(missing).toContain('"quota-exceeded"')
    })

    test('a refusal whose kind is not one of the kinds', () => {
      expect(diagnostics.find((line) => line.includes("'UnlistedError'"))).toContain('"unlisted"')
    })

    test('a refusal without a kind', () => {
      expect(diagnostics.find((line) => line.includes("'BareError'"))).toContain('abstract member kind')
    })
  })
})
