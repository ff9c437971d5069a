import { describe, expect, test } from 'bun:test'
import { resolve } from 'node:path'
import { banner, readyFields } from '../src/banner.ts'

describe('the start-up banner', () => {
  test('starts with the line scripts wait for, then the addresses, where the data lives, and sign-up', () => {
    const text = banner({ url: 'http://127.0.0.1:3000', ui: true, data: './data/db.json', signup: true })
    expect(text.split('\n')).toEqual([
      'rock-legends listening on http://127.0.0.1:3000',
      '  catalogue  http://127.0.0.1:3000/',
      '  API docs   http://127.0.0.1:3000/docs',
      '  API        http://127.0.0.1:3000/api/v1/artists',
      `  data       ${resolve('./data/db.json')} (a JSON file, with its journal beside it)`,
      '  sign-up    open: anyone who reaches the server may create an account',
    ])
    expect(/^rock-legends listening on (http:\/\/\S+)$/m.exec(text)?.[1]).toBe('http://127.0.0.1:3000')
  })

  test('says when the data is only in memory, and leaves out the pages when they are off', () => {
    const text = banner({ url: 'http://[::1]:8080', ui: false, data: ':memory:', signup: false })
    expect(text).not.toContain('catalogue')
    expect(text).toContain('  data       in memory (--data :memory:): everything is gone when the process stops')
    expect(text).toContain('  sign-up    closed')
  })

  test('names where the metrics are scraped, when they are served', () => {
    const facts = { url: 'http://127.0.0.1:3000', ui: true, data: ':memory:', signup: true }
    expect(
      banner({ ...facts, metricsUrl: 'http://127.0.0.1:9464/metrics' })
        .split('\n')
        .at(-1),
    ).toBe('  metrics    http://127.0.0.1:9464/metrics')
    expect(banner(facts)).not.toContain('metrics')
  })

  test('names a database without its password', () => {
    const data = 'postgres://rl:s3cret@db.example:5433/catalogue'
    const text = banner({ url: 'http://127.0.0.1:3000', ui: true, data, signup: true })
    expect(text).toContain(
      '  data       postgres://rl:***@db.example:5433/catalogue (a database, shared by every replica',
    )
    expect(text).not.toContain('s3cret')
  })

  test('with --log json, the same facts are the fields of one ready object', () => {
    const facts = { url: 'http://127.0.0.1:3000', ui: true, data: './data/db.json', signup: true }
    expect(readyFields({ ...facts, metricsUrl: 'http://127.0.0.1:9464/metrics' }, '1.2.3')).toEqual({
      url: 'http://127.0.0.1:3000',
      pages: 'http://127.0.0.1:3000/',
      docs: 'http://127.0.0.1:3000/docs',
      api: 'http://127.0.0.1:3000/api/v1/artists',
      data: resolve('./data/db.json'),
      store: 'json-file',
      signup: true,
      metrics: 'http://127.0.0.1:9464/metrics',
      version: '1.2.3',
      pid: process.pid,
    })
    const database = readyFields(
      { ...facts, ui: false, signup: false, data: 'postgres://rl:s3cret@db.example:5433/catalogue' },
      '1.2.3',
    )
    expect(database).toMatchObject({ data: 'postgres://rl:***@db.example:5433/catalogue', store: 'postgresql' })
    expect(database).not.toHaveProperty('pages')
    expect(database).not.toHaveProperty('metrics')
    expect(readyFields({ ...facts, data: ':memory:' }, '1.2.3')).toMatchObject({ data: ':memory:', store: 'memory' })
  })
})
