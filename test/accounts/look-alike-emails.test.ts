import { afterEach, beforeEach, describe, expect, test } from 'bun:test'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { ACCOUNT_LIMITS } from '../../src/accounts/service.ts'
import { emailKey } from '../../src/model/email.ts'
import { openJsonFileStore } from '../../src/store/json-file/json-file.ts'
import { testApp } from '../helpers.ts'
import { removeDir, tempDir } from '../support/binary.ts'
import { STORED_HASH } from '../support/passwords.ts'

const SIGNUP = '/api/v1/user/signup'
const LOGIN = '/api/v1/user/login'
const PASSWORD = 'i-love-rock'

/** The full-width form of an ASCII text: `carlos` → `ｃａｒｌｏｓ`, `@` → `＠`. */
const fullWidth = (text: string) =>
  text.replace(/[!-~]/g, (character) => String.fromCharCode((character.codePointAt(0) ?? 0) + 0xfee0))

const signUp = (call: ReturnType<typeof testApp>['call'], email: string) =>
  call(SIGNUP, { method: 'POST', body: { name: 'Carlos', email, password: PASSWORD } })

describe('look-alike forms of one email are one account', () => {
  test.each([
    ['full-width', 'carlos@rock.com', 'ｃａｒｌｏｓ＠ｒｏｃｋ．com'],
    ['full-width and upper case', 'carlos@rock-legends.com', fullWidth('CARLOS@ROCK-LEGENDS.COM')],
    ['small at sign and one-dot leader', 'carlos@rock.com', 'carlos\uFE6Brock\u2024com'],
    ['decomposed (e + U+0301)', 'josé@rock-legends.com', 'jose\u0301@rock-legends.com'],
    ['decomposed and upper case', 'josé@rock-legends.com', 'JOSE\u0301@ROCK-LEGENDS.COM'],
    ['precomposed, after a decomposed sign-up', 'jose\u0301@rock-legends.com', 'josé@rock-legends.com'],
    ['ligature (ﬁ)', 'fito@rock-legends.com', '\uFB01to@rock-legends.com'],
  ])('%s: sign-up is 409, and login with it finds the account', async (_, registered, lookAlike) => {
    const { call } = testApp()
    const created = await signUp(call, registered)
    expect(created.status).toBe(201)
    const duplicate = await signUp(call, lookAlike)
    expect(duplicate.status).toBe(409)
    expect(duplicate.json).toMatchObject({ type: '/problems/conflict', status: 409 })
    const login = await call(LOGIN, { method: 'POST', body: { email: lookAlike, password: PASSWORD } })
    expect(login.status).toBe(200)
    expect(login.json.user).toEqual(created.json)
  })

  test('the address is kept as typed (trimmed, lower-cased) for display, and compared folded', async () => {
    const { call, store } = testApp()
    const typed = '  ＭＡＲＩＡ＠ｒｏｃｋ．com '
    const { status, json } = await signUp(call, typed)
    expect(status).toBe(201)
    expect(json.email).toBe('ｍａｒｉａ＠ｒｏｃｋ．com')
    expect((await store.users.findByEmail('maria@rock.com'))?.id).toBe(json.id)
    const login = await call(LOGIN, { method: 'POST', body: { email: 'Maria@Rock.com', password: PASSWORD } })
    expect(login.json.user.email).toBe('ｍａｒｉａ＠ｒｏｃｋ．com')
  })

  test('an address whose folded form is not one is 400 naming the email', async () => {
    const { call, store } = testApp()
    // "⒈" folds to "1.", which leaves an empty label: rock1..com.
    const { status, json } = await signUp(call, 'carlos@rock⒈.com')
    expect(status).toBe(400)
    expect(json.errors).toEqual([{ pointer: '/email', detail: expect.any(String) }])
    expect(await store.isEmpty()).toBe(true)
  })

  test('failed logins under look-alike forms count against the one account', async () => {
    const { call } = testApp()
    await signUp(call, 'carlos@rock.com')
    const forms = ['carlos@rock.com', 'ｃａｒｌｏｓ＠ｒｏｃｋ．com', 'CARLOS@ROCK.COM', 'carlos\uFE6Brock\u2024com']
    const { limit } = ACCOUNT_LIMITS.loginFailuresPerEmail
    for (let i = 0; i < limit; i++) {
      const body = { email: forms[i % forms.length], password: 'wrong-password' }
      expect((await call(LOGIN, { method: 'POST', body })).status).toBe(401)
    }
    const body = { email: fullWidth('carlos@rock.com'), password: 'wrong-password' }
    expect((await call(LOGIN, { method: 'POST', body })).status).toBe(429)
  })

  test('the folded form: NFKC, then lower case', () => {
    expect(emailKey(' ＣＡＲＬＯＳ＠ｒｏｃｋ．com ')).toBe('carlos@rock.com')
    expect(emailKey('JOSE\u0301@x.com')).toBe('jos\u00e9@x.com')
  })
})

describe('a data file written before emails were folded', () => {
  let dir: string
  beforeEach(() => {
    dir = tempDir()
  })
  afterEach(() => removeDir(dir))

  test('loads unchanged; of two look-alike addresses, the first registered keeps it', async () => {
    const file = join(dir, 'db.json')
    const user = (id: number, email: string) => ({
      id,
      name: `U${id}`,
      email,
      passwordHash: STORED_HASH,
      createdAt: 'then',
    })
    writeFileSync(
      file,
      JSON.stringify({
        version: 1,
        counters: { artists: 0, albums: 0, users: 2, credentials: 0 },
        artists: [],
        albums: [],
        users: [user(1, 'carlos@rock.com'), user(2, 'ｃａｒｌｏｓ＠ｒｏｃｋ．com')],
        credentials: [],
      }),
    )
    const store = await openJsonFileStore(file)
    try {
      expect((await store.users.get(2))?.email).toBe('ｃａｒｌｏｓ＠ｒｏｃｋ．com')
      for (const email of ['carlos@rock.com', 'ｃａｒｌｏｓ＠ｒｏｃｋ．com', 'CARLOS@ROCK.COM'])
        expect((await store.users.findByEmail(email))?.id).toBe(1)
    } finally {
      await store.close()
    }
  })
})
