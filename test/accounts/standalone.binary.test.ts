import { expect, test } from 'bun:test'
import { copyFileSync, existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { spawn } from 'bun'
import { ensureBinary, removeDir, tempDir } from '../support/binary.ts'

// The binary is copied alone into an empty directory and run from there, so argon2's native addon can only come
// from inside the executable: there is no node_modules anywhere above a fresh directory under the temp dir.
test('the compiled binary, copied alone, signs up, logs in, writes with a token and a key, and revokes', async () => {
  const dir = tempDir('rock-legends-accounts-binary-')
  const binary = join(dir, 'rock-legends')
  copyFileSync(await ensureBinary(), binary)
  const child = spawn([binary, '--port', '0', '--data', join(dir, 'db.json'), '--log', 'off'], {
    cwd: dir,
    env: { PATH: process.env.PATH ?? '' },
    stdin: 'ignore',
    stdout: 'pipe',
    stderr: 'pipe',
  })
  const stderr = new Response(child.stderr).text()
  try {
    const reader = child.stdout.getReader()
    let stdout = ''
    while (!stdout.includes('\n')) {
      const { value, done } = await reader.read()
      if (done) throw new Error(`rock-legends exited before it was ready: ${await stderr}`)
      stdout += new TextDecoder().decode(value)
    }
    reader.releaseLock()
    const base = /^rock-legends listening on (http:\/\/\S+)$/m.exec(stdout)?.[1]
    expect(base).toBeDefined()
    expect(existsSync(join(dir, 'node_modules'))).toBe(false)
    const call = async (path: string, method = 'GET', body?: unknown, headers: Record<string, string> = {}) => {
      const init: RequestInit = { method, headers: { ...headers } }
      if (body !== undefined) {
        init.body = JSON.stringify(body)
        ;(init.headers as Record<string, string>)['content-type'] = 'application/json'
      }
      const response = await fetch(`${base}${path}`, init)
      const text = await response.text()
      return { status: response.status, json: text ? JSON.parse(text) : undefined }
    }
    const carlos = { name: 'Carlos', email: 'carlos@rock-legends.com', password: 'i-love-rock' }
    expect((await call('/api/v1/user/signup', 'POST', carlos)).status).toBe(201)
    expect((await call('/api/v1/user/login', 'POST', { email: carlos.email, password: 'wrong-pass' })).status).toBe(401)
    const login = await call('/api/v1/user/login', 'POST', { email: carlos.email, password: carlos.password })
    expect(login.status).toBe(200)
    const asUser = { authorization: `Bearer ${login.json.token}` }
    expect((await call('/api/v1/artists', 'POST', { name: 'X' }, asUser)).status).toBe(201)
    const created = await call('/api/v1/user/api-keys', 'POST', { name: 'ci' }, asUser)
    expect(created.status).toBe(201)
    const asKey = { 'x-api-key': created.json.key }
    expect((await call('/api/v1/artists', 'POST', { name: 'X' }, asKey)).status).toBe(201)
    expect((await call(`/api/v1/user/api-keys/${created.json.id}`, 'DELETE', undefined, asUser)).status).toBe(204)
    expect((await call('/api/v1/artists', 'POST', { name: 'X' }, asKey)).status).toBe(401)
    child.kill('SIGTERM')
    expect(await child.exited).toBe(0)
    // The executable hashes with argon2id at OWASP's cost (the in-process tests use a cheaper hasher, so this is where
    // the shipped parameters are checked end to end).
    const document = JSON.parse(readFileSync(join(dir, 'db.json'), 'utf8'))
    expect(document.users[0].passwordHash).toStartWith('$argon2id$v=19$m=19456,t=2,p=1$')
  } finally {
    child.kill('SIGKILL')
    await child.exited
    removeDir(dir)
  }
}, 120_000)
