import { describe, expect, test } from 'bun:test'
import { type Config, parseArgs, parseDuration, UsageError } from '../src/config.ts'

const defaults: Config = {
  port: 3000,
  host: '127.0.0.1',
  data: './data/db.json',
  seed: false,
  apiKeys: [],
  tokenTtlMs: 24 * 3_600_000,
  log: 'pretty',
  cors: [],
}

const run = (argv: string[], env: Record<string, string> = {}) => {
  const invocation = parseArgs(argv, env)
  if (invocation.action !== 'run') throw new Error(`expected run, got ${invocation.action}`)
  return invocation.config
}

describe('parseArgs', () => {
  test('defaults', () => {
    expect(run([])).toEqual(defaults)
  })

  test.each([
    [['--port', '0'], {}, { port: 0 }],
    [['--port=8080'], {}, { port: 8080 }],
    [[], { PORT: '4000' }, { port: 4000 }],
    [['--port', '5000'], { PORT: '4000' }, { port: 5000 }],
    [['--host', '0.0.0.0'], {}, { host: '0.0.0.0' }],
    [[], { HOST: '::1' }, { host: '::1' }],
    [['--data', ':memory:'], {}, { data: ':memory:' }],
    [[], { ROCK_LEGENDS_DATA: '/var/lib/rl/db.json' }, { data: '/var/lib/rl/db.json' }],
    [['--seed'], {}, { seed: true }],
    [['--seed=fixtures.json'], {}, { seed: 'fixtures.json' }],
    [[], { ROCK_LEGENDS_SEED: 'true' }, { seed: true }],
    [[], { ROCK_LEGENDS_SEED: 'mine.json' }, { seed: 'mine.json' }],
    [['--api-key', 'a', '--api-key=b'], {}, { apiKeys: ['a', 'b'] }],
    [[], { ROCK_LEGENDS_API_KEYS: 'a, b,,c' }, { apiKeys: ['a', 'b', 'c'] }],
    [['--api-key', 'x'], { ROCK_LEGENDS_API_KEYS: 'a,b' }, { apiKeys: ['x'] }],
    [['--token-ttl', '30m'], {}, { tokenTtlMs: 1_800_000 }],
    [[], { ROCK_LEGENDS_TOKEN_TTL: '7d' }, { tokenTtlMs: 7 * 86_400_000 }],
    [['--log', 'json'], {}, { log: 'json' }],
    [[], { ROCK_LEGENDS_LOG: 'off' }, { log: 'off' }],
    [['--cors', 'https://a.example, https://b.example'], {}, { cors: ['https://a.example', 'https://b.example'] }],
  ] as [string[], Record<string, string>, Partial<Config>][])('%p with %p', (argv, env, expected) => {
    expect(run(argv, env)).toEqual({ ...defaults, ...expected })
  })

  test.each([
    [['--port', '70000']],
    [['--port', 'http']],
    [['--port', '-1']],
    [['--port']],
    [['--log', 'loud']],
    [['--token-ttl', '0']],
    [['--token-ttl', 'soon']],
    [['--api-key', '']],
    [['--data', '']],
    [['--verbose']],
    [['serve']],
    [['--help=yes']],
  ])('%p is a usage error', (argv) => {
    expect(() => parseArgs(argv, {})).toThrow(UsageError)
  })

  test('--help and --version win over everything else', () => {
    expect(parseArgs(['--port', '1', '--help'], {})).toEqual({ action: 'help' })
    expect(parseArgs(['--version'], {})).toEqual({ action: 'version' })
  })
})

describe('parseDuration', () => {
  test.each([
    ['90', 90_000],
    ['90s', 90_000],
    ['500ms', 500],
    ['30m', 1_800_000],
    ['24h', 86_400_000],
    ['7d', 604_800_000],
  ])('%s → %d ms', (text, ms) => {
    expect(parseDuration(text)).toBe(ms)
  })
})
