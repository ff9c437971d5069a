/**
 * One rule for the text a client sends, over every store: no field of a body and no query parameter may hold U+0000
 * (PostgreSQL's text cannot) or a UTF-16 surrogate without its partner (UTF-8 cannot; Bun.SQL stored U+FFFD in its
 * place). The same requests go to an app over the in-memory document store and to one over PostgreSQL: each is
 * refused alike, with a 400 naming the field, never a 500 and never a log line; and text the rule allows (other
 * control characters, astral characters, U+FFFD itself) is stored and read back unchanged by both.
 */
import { afterEach, describe, expect, test } from 'bun:test'
import { createApp } from '../../src/app.ts'
import { InvalidFieldError } from '../../src/model/errors.ts'
import { checkNewAccount, checkPassword } from '../../src/ops/accounts.ts'
import { openMemoryStore } from '../../src/store/document/memory.ts'
import type { Store } from '../../src/store/store.ts'
import { skipWithoutPostgres, testPostgres } from '../support/postgres.ts'

const KEY = 'text-fields-key'
const DETAIL = 'must not contain U+0000 or an unpaired UTF-16 surrogate'
const skipSql = skipWithoutPostgres()

/** The SQL stores the test running opened: closed after it, then their databases emptied for the next. */
const opened: (Store & { close(): Promise<unknown> })[] = []
afterEach(async () => {
  for (const store of opened.splice(0)) await store.close()
})

/**
 * The stores compared: memory always, PostgreSQL where the machine has it (always under CI), over an empty, migrated
 * database (`emptyDatabase`; the rule, not the migrations, is under test).
 */
async function stores(): Promise<[string, Store][]> {
  const all: [string, Store][] = [['memory', openMemoryStore()]]
  if (!skipSql) {
    const postgres = await testPostgres()
    const { openSqlStore } = await import('../../src/store/sql/sql-store.ts')
    const store = await openSqlStore(postgres.url(await postgres.emptyDatabase()), { pool: 2 })
    opened.push(store)
    all.push(['postgres', store])
  }
  return all
}

interface Answer {
  status: number
  json: { type?: string; errors?: unknown; id?: number; token?: string; [field: string]: unknown }
}

/** An app over `store` with a signed-in user and one artist, and what it reported as failures. */
async function world(store: Store) {
  const reports: string[] = []
  const app = createApp({ store, apiKeys: [KEY], report: (message, error) => reports.push(`${message}: ${error}`) })
  const send = async (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) => {
    const response = await app.handle(
      new Request(`http://localhost${path}`, {
        method,
        headers: { 'content-type': 'application/json', ...headers },
        ...(body !== undefined && { body: JSON.stringify(body) }),
      }),
    )
    return { status: response.status, json: (await response.json().catch(() => ({}))) as Answer['json'] }
  }
  const user = { name: 'Ana', email: 'ana@rock-legends.com', password: 'a good password' }
  expect((await send('POST', '/api/v1/user/signup', user)).status).toBe(201)
  const { token } = (await send('POST', '/api/v1/user/login', { email: user.email, password: user.password })).json
  expect((await send('POST', '/api/v1/artists', { name: 'Pappo' }, { 'x-api-key': KEY })).json.id).toBe(1)
  return { send, reports, bearer: { authorization: `Bearer ${token}` } }
}

const NUL = 'a\u0000b'
const LEAD = 'a\ud800b'
const TRAIL = 'a\udc00'
const REVERSED = '\udfb8\ud83c'

const service = { 'x-api-key': KEY }
/** [what, method, path, body, credentials: 'service' | 'user' | 'none', the field refused]. */
const refused: [string, string, string, unknown, 'service' | 'user' | 'none', string][] = [
  ['artist name with NUL', 'POST', '/api/v1/artists', { name: NUL }, 'service', '/name'],
  ['artist name with a lone lead surrogate', 'POST', '/api/v1/artists', { name: LEAD }, 'service', '/name'],
  ['artist name with a lone trail surrogate', 'POST', '/api/v1/artists', { name: TRAIL }, 'service', '/name'],
  ['artist name with a reversed pair', 'POST', '/api/v1/artists', { name: REVERSED }, 'service', '/name'],
  [
    'artist description with NUL',
    'POST',
    '/api/v1/artists',
    { name: 'A', description: NUL },
    'service',
    '/description',
  ],
  ['artist band with a lone surrogate', 'POST', '/api/v1/artists', { name: 'A', band: LEAD }, 'service', '/band'],
  ['artist image with NUL', 'POST', '/api/v1/artists', { name: 'A', image: '/x\u0000.png' }, 'service', '/image'],
  [
    'replaced description with NUL',
    'PUT',
    '/api/v1/artists/1',
    { name: 'A', description: NUL },
    'service',
    '/description',
  ],
  ['album name with NUL', 'POST', '/api/v1/artists/1/albums', { name: NUL }, 'service', '/name'],
  [
    'album image with a lone surrogate',
    'POST',
    '/api/v1/artists/1/albums',
    { name: 'A', image: `/${LEAD}` },
    'service',
    '/image',
  ],
  [
    'sign-up name with NUL',
    'POST',
    '/api/v1/user/signup',
    { name: NUL, email: 'b@c.de', password: 'long enough' },
    'none',
    '/name',
  ],
  [
    'sign-up email with NUL',
    'POST',
    '/api/v1/user/signup',
    { name: 'B', email: 'b\u0000@c.de', password: 'long enough' },
    'none',
    '/email',
  ],
  [
    'sign-up password with NUL',
    'POST',
    '/api/v1/user/signup',
    { name: 'B', email: 'b@c.de', password: `long ${NUL}` },
    'none',
    '/password',
  ],
  [
    'sign-up password with a lone surrogate',
    'POST',
    '/api/v1/user/signup',
    { name: 'B', email: 'b@c.de', password: `long ${LEAD}` },
    'none',
    '/password',
  ],
  [
    'login email with NUL',
    'POST',
    '/api/v1/user/login',
    { email: 'ana\u0000@rock-legends.com', password: 'x' },
    'none',
    '/email',
  ],
  [
    'login password with NUL',
    'POST',
    '/api/v1/user/login',
    { email: 'ana@rock-legends.com', password: NUL },
    'none',
    '/password',
  ],
  [
    'login password with a lone surrogate',
    'POST',
    '/api/v1/user/login',
    { email: 'ana@rock-legends.com', password: LEAD },
    'none',
    '/password',
  ],
  ['key name with NUL', 'POST', '/api/v1/user/api-keys', { name: NUL }, 'user', '/name'],
  [
    'operator-added account with NUL',
    'POST',
    '/__admin/users',
    { name: NUL, email: 'c@d.ef', password: 'long enough' },
    'service',
    '/name',
  ],
  [
    'operator password reset with NUL',
    'POST',
    '/__admin/users/reset-password',
    { email: 'ana@rock-legends.com', password: `long ${NUL}` },
    'service',
    '/password',
  ],
]

describe('text no store can keep is refused alike over every store', () => {
  test('every body field: 400 naming the field, the same answer on each store, nothing logged, nothing stored', async () => {
    const answers: Record<string, unknown[]> = {}
    for (const [label, store] of await stores()) {
      const { send, reports, bearer } = await world(store)
      for (const [what, method, path, body, credentials, pointer] of refused) {
        const headers = credentials === 'service' ? service : credentials === 'user' ? bearer : {}
        const { status, json } = await send(method, path, body, headers)
        expect({ label, what, status, type: json.type, errors: json.errors }).toEqual({
          label,
          what,
          status: 400,
          type: '/problems/validation-error',
          errors: [{ pointer, detail: DETAIL }],
        })
        answers[what] = [...(answers[what] ?? []), { status, json }]
      }
      // Nothing was stored on the way: one artist, no album, one account with its password unchanged.
      expect((await send('GET', '/api/v1/artists')).json.meta).toMatchObject({ total: 1 })
      expect((await send('GET', '/api/v1/artists/1/albums')).json.meta).toMatchObject({ total: 0 })
      const login = await send('POST', '/api/v1/user/login', {
        email: 'ana@rock-legends.com',
        password: 'a good password',
      })
      expect(login.status).toBe(200)
      expect(reports).toEqual([])
    }
    for (const [what, each] of Object.entries(answers))
      expect({ what, each: each.slice(1) }).toEqual({ what, each: each.slice(0, -1) })
  })

  test('the search parameter q: 400 naming it on each store, never a 500', async () => {
    for (const [label, store] of await stores()) {
      const { send, reports } = await world(store)
      for (const path of [
        '/api/v1/artists?q=a%00',
        '/api/v1/artists/1/albums?q=%00',
        '/api/v1/artists?q=%00&sort=name',
      ]) {
        const { status, json } = await send('GET', path)
        expect({ label, path, status, errors: json.errors }).toEqual({
          label,
          path,
          status: 400,
          errors: [{ parameter: 'q', detail: DETAIL }],
        })
      }
      expect(reports).toEqual([])
    }
  })

  test('text the rule allows is stored faithfully by each store: no character changed', async () => {
    const texts = [
      'Pappo 🎸 \ud83c\udfb8',
      'tab\there, line\nbreak, bell \u0007, escape \u001b[2J, delete \u007f',
      'replacement \ufffd, BOM \ufeff, noncharacter \uffff',
      'combining e\u0301 and ñ',
    ]
    for (const [label, store] of await stores()) {
      const { send, reports } = await world(store)
      for (const text of texts) {
        const created = await send(
          'POST',
          '/api/v1/artists',
          { name: `N ${text}`, description: text, band: text },
          service,
        )
        expect({ label, status: created.status }).toEqual({ label, status: 201 })
        const read = await send('GET', `/api/v1/artists/${created.json.id}`)
        expect({ label, ...read.json } as Record<string, unknown>).toEqual({
          label,
          id: created.json.id,
          name: `N ${text}`,
          description: text,
          band: text,
        })
      }
      expect(reports).toEqual([])
    }
  })

  test('the command line checks the same rule (`rock-legends users add`, `reset-password`)', () => {
    const refusal = (check: () => void) => {
      try {
        check()
      } catch (error) {
        if (error instanceof InvalidFieldError) return { pointer: error.pointer, detail: error.message }
        throw error
      }
      return undefined
    }
    const account = { name: 'Ana', email: 'ana@rock-legends.com', password: 'long enough' }
    expect(refusal(() => checkNewAccount({ ...account, name: NUL }))).toEqual({ pointer: '/name', detail: DETAIL })
    expect(refusal(() => checkNewAccount({ ...account, email: 'a\u0000@b.cd' }))?.pointer).toBe('/email')
    expect(refusal(() => checkNewAccount({ ...account, password: `long ${LEAD}` }))).toEqual({
      pointer: '/password',
      detail: DETAIL,
    })
    expect(refusal(() => checkPassword(`long ${NUL}`))).toEqual({ pointer: '/password', detail: DETAIL })
    expect(refusal(() => checkNewAccount(account))).toBeUndefined()
  })
})
