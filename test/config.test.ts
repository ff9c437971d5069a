import { describe, expect, test } from 'bun:test'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { type Config, parseArgs, parseDuration, UsageError } from '../src/config.ts'
import { type OptionDeclaration, SERVER_OPTIONS } from '../src/options.ts'

const defaults: Config = {
  port: 3000,
  host: '127.0.0.1',
  data: './data/db.json',
  seed: false,
  apiKeys: [],
  tokenTtlMs: 24 * 3_600_000,
  log: 'pretty',
  logLevel: 'info',
  cors: [],
  delay: 0,
  readOnly: false,
  allowReset: false,
  fixtures: false,
  fixturesNamespaces: 500,
  fixturesMemory: 256,
  ui: true,
  signup: true,
  dbWaitMs: 10_000,
  trustProxy: [],
  hstsMs: 365 * 86_400_000,
  acmeDirectory: 'https://acme-v02.api.letsencrypt.org/directory',
  httpPort: 80,
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
    [['--log-level', 'debug'], {}, { logLevel: 'debug' }],
    [['--log-level=warn'], { ROCK_LEGENDS_LOG_LEVEL: 'debug' }, { logLevel: 'warn' }],
    [[], { ROCK_LEGENDS_LOG_LEVEL: 'error' }, { logLevel: 'error' }],
    [['--cors', 'https://a.example, https://b.example'], {}, { cors: ['https://a.example', 'https://b.example'] }],
    [['--delay', '250'], {}, { delay: 250 }],
    [['--delay=0'], {}, { delay: 0 }],
    [[], { ROCK_LEGENDS_DELAY: '1500' }, { delay: 1500 }],
    [['--delay', '20'], { ROCK_LEGENDS_DELAY: '1500' }, { delay: 20 }],
    [['--read-only'], {}, { readOnly: true }],
    [[], { ROCK_LEGENDS_READ_ONLY: 'true' }, { readOnly: true }],
    [[], { ROCK_LEGENDS_READ_ONLY: '1' }, { readOnly: true }],
    [[], { ROCK_LEGENDS_READ_ONLY: 'false' }, { readOnly: false }],
    [[], { ROCK_LEGENDS_READ_ONLY: '' }, { readOnly: false }],
    [['--read-only'], { ROCK_LEGENDS_READ_ONLY: 'false' }, { readOnly: true }],
    [['--allow-reset'], {}, { allowReset: true }],
    [[], { ROCK_LEGENDS_ALLOW_RESET: 'TRUE' }, { allowReset: true }],
    [[], { ROCK_LEGENDS_ALLOW_RESET: '0' }, { allowReset: false }],
    [['--data', 'postgres://rl@db.example/catalogue'], {}, { data: 'postgres://rl@db.example/catalogue' }],
    [
      [],
      { ROCK_LEGENDS_DATA: 'postgresql://rl@/rl?host=/run/postgresql' },
      { data: 'postgresql://rl@/rl?host=/run/postgresql' },
    ],
    [
      ['--data', 'postgres://db/rl', '--db-pool', '4', '--db-wait', '2m'],
      {},
      { data: 'postgres://db/rl', dbPool: 4, dbWaitMs: 120_000 },
    ],
    [
      ['--data', 'postgres://db/rl'],
      { ROCK_LEGENDS_DB_POOL: '20', ROCK_LEGENDS_DB_WAIT: '30s' },
      { data: 'postgres://db/rl', dbPool: 20, dbWaitMs: 30_000 },
    ],
    [['--metrics', '9464'], {}, { metrics: '9464' }],
    [['--metrics=127.0.0.1:0'], {}, { metrics: '127.0.0.1:0' }],
    [['--metrics', '[::1]:9464'], {}, { metrics: '[::1]:9464' }],
    [[], { ROCK_LEGENDS_METRICS: '0.0.0.0:9464' }, { metrics: '0.0.0.0:9464' }],
    [['--metrics', '9100'], { ROCK_LEGENDS_METRICS: '9464' }, { metrics: '9100' }],
    [[], { ROCK_LEGENDS_METRICS: '' }, {}],
    // An empty variable is unset, in every command, as a service manager's file may leave it.
    [[], { HOST: '', ROCK_LEGENDS_BACKUP_EVERY: '', ROCK_LEGENDS_SEED: '', ROCK_LEGENDS_LOG: ' ' }, {}],
    [[], { HOST: ' 0.0.0.0 ' }, { host: '0.0.0.0' }],
    [[], { ROCK_LEGENDS_TRUST_PROXY: 'loopback, 10.0.0.0/8' }, { trustProxy: ['loopback', '10.0.0.0/8'] }],
  ] as [string[], Record<string, string>, Partial<Config>][])('%p with %p', (argv, env, expected) => {
    expect(run(argv, env)).toEqual({ ...defaults, ...expected })
  })

  test.each([
    [['--port', '70000']],
    [['--port', 'http']],
    [['--port', '-1']],
    [['--port']],
    [['--log', 'loud']],
    [['--log-level', 'verbose']],
    [['--log-level']],
    [['--token-ttl', '0']],
    [['--token-ttl', 'soon']],
    [['--api-key', '']],
    [['--data', '']],
    [['--db-pool', '4']],
    [['--data', 'postgres://rl@db.example/catalogue', '--db-pool', '0']],
    [['--data', 'postgres://rl@db.example/catalogue', '--db-pool', 'many']],
    [['--data', 'postgres://rl@db.example/catalogue', '--db-wait', 'forever']],
    [['--data', './db.json', '--db-wait', '30s']],
    [['--verbose']],
    [['serve']],
    [['--help=yes']],
    [['--delay', '-5']],
    [['--delay', '1.5']],
    [['--delay', '2s']],
    [['--delay', '120001']],
    [['--delay']],
    [['--read-only=yes']],
    [['--allow-reset', 'true']],
    [['healthcheck', '--port', '3000']],
    [['healthcheck', '--url']],
    [['healthcheck', '--url', 'not a url']],
    [['healthcheck', '--url', 'ftp://127.0.0.1:3000']],
    [['healthcheck', 'http://127.0.0.1:3000']],
    [['--metrics']],
    [['--metrics', '70000']],
    [['--metrics', 'localhost']],
    [['--metrics', 'http://127.0.0.1:9464']],
    [['--metrics', '127.0.0.1:9464/metrics']],
    [['--seed', '-']],
    [['--trust-proxy', 'localhost']],
    [['--trust-proxy', '10.0.0.0/33']],
    [['copy', '--from', 'a.json', '--to', 'b.json', '--to', 'c.json']],
    [['copy', '--from', 'a.json', '--from', 'b.json', '--to', 'c.json']],
  ])('%p is a usage error', (argv) => {
    expect(() => parseArgs(argv, {})).toThrow(UsageError)
  })

  test.each([
    [{ ROCK_LEGENDS_READ_ONLY: 'yes' }],
    [{ ROCK_LEGENDS_ALLOW_RESET: 'on' }],
    [{ ROCK_LEGENDS_DELAY: 'slow' }],
    [{ ROCK_LEGENDS_METRICS: 'true' }],
    // The store is never guessed: an empty ROCK_LEGENDS_DATA is refused, not taken as the default file.
    [{ ROCK_LEGENDS_DATA: '' }],
  ])('%p is a usage error', (env) => {
    expect(() => parseArgs([], env)).toThrow(UsageError)
  })

  test('an empty ROCK_LEGENDS_DATA is refused by backup and users too; an empty ROCK_LEGENDS_URL is unset', () => {
    expect(() => parseArgs(['backup', 'f.json'], { ROCK_LEGENDS_DATA: '' })).toThrow(UsageError)
    expect(() => parseArgs(['users', 'list'], { ROCK_LEGENDS_DATA: ' ' })).toThrow(UsageError)
    expect(parseArgs(['users', 'list'], { ROCK_LEGENDS_URL: '' })).toMatchObject({ config: { url: undefined } })
  })

  test.each([
    [['healthcheck'], {}, 'http://127.0.0.1:3000'],
    [['healthcheck'], { PORT: '8080' }, 'http://127.0.0.1:8080'],
    [['healthcheck'], { PORT: '8080', HOST: '0.0.0.0' }, 'http://127.0.0.1:8080'],
    [['healthcheck'], { HOST: '::' }, 'http://127.0.0.1:3000'],
    [['healthcheck'], { HOST: '::1' }, 'http://[::1]:3000'],
    [['healthcheck'], { HOST: '10.0.0.5', PORT: '81' }, 'http://10.0.0.5:81'],
    [['healthcheck'], { HOST: ' 0.0.0.0 ' }, 'http://127.0.0.1:3000'],
    [['healthcheck', '--url', 'http://10.1.2.3:9000'], { PORT: '8080' }, 'http://10.1.2.3:9000'],
    [['healthcheck', '--url=https://api.example/rl'], {}, 'https://api.example/rl'],
    [['healthcheck'], { PORT: '443', ROCK_LEGENDS_TLS_CERT: '/etc/rl/cert.pem' }, 'https://127.0.0.1:443'],
    [['healthcheck'], { ROCK_LEGENDS_HTTPS: 'api.example.com' }, 'https://127.0.0.1:443'],
    [['healthcheck'], { ROCK_LEGENDS_HTTPS: 'api.example.com', PORT: '8443' }, 'https://127.0.0.1:8443'],
  ] as [string[], Record<string, string>, string][])('%p with %p asks %s', (argv, env, url) => {
    expect(parseArgs(argv, env)).toEqual({ action: 'healthcheck', config: { url } })
  })

  test('--help and --version win over everything else', () => {
    expect(parseArgs(['--port', '1', '--help'], {})).toEqual({ action: 'help' })
    expect(parseArgs(['--version'], {})).toEqual({ action: 'version' })
  })

  test.each([
    [['--no-signup'], {}, false],
    [[], { ROCK_LEGENDS_NO_SIGNUP: 'true' }, false],
    [[], { ROCK_LEGENDS_NO_SIGNUP: '0' }, true],
    [[], {}, true],
  ] as [string[], Record<string, string>, boolean][])('%p with %p: sign-up open is %p', (argv, env, open) => {
    expect(run(argv, env).signup).toBe(open)
  })

  test('-h and -v are the short forms of --help and --version', () => {
    expect(parseArgs(['-h'], {})).toEqual({ action: 'help' })
    expect(parseArgs(['--port', '1', '-v'], {})).toEqual({ action: 'version' })
    expect(() => parseArgs(['-x'], {})).toThrow(UsageError)
  })

  test.each([
    [['--seed', 'fixture.json'], 'fixture.json'],
    [['--seed', 'fixture.json', '--port', '0'], 'fixture.json'],
    [['--seed', '--port', '0'], true],
    [['--port', '0', '--seed'], true],
    [['--seed', 'false'], false],
    [['--seed=fixture.json'], 'fixture.json'],
  ] as [string[], boolean | string][])('%p seeds %p', (argv, seed) => {
    expect(run(argv, {}).seed).toBe(seed)
  })
})

describe('--https', () => {
  test("serves HTTPS on 443 unless --port or PORT says, with the plain-HTTP port 80 and Let's Encrypt", () => {
    const config = run(['--https', 'api.example.com,www.example.com'])
    expect(config).toMatchObject({
      httpsDomains: ['api.example.com', 'www.example.com'],
      port: 443,
      httpPort: 80,
      acmeDirectory: 'https://acme-v02.api.letsencrypt.org/directory',
    })
    expect(run(['--https', 'api.example.com', '--port', '8443']).port).toBe(8443)
    expect(run([], { ROCK_LEGENDS_HTTPS: 'api.example.com', PORT: '8443' }).port).toBe(8443)
    expect(run(['--https', 'a.example', '--http-port', '8080', '--acme-dir', '/srv/acme']).httpPort).toBe(8080)
  })

  test.each([
    [['--https', 'a.example', '--tls-cert', 'c.pem', '--tls-key', 'k.pem'], /either --https or --tls-cert/],
    [['--https', 'a.example', '--data', ':memory:'], /--acme-dir/],
    [['--https', 'a.example', '--data', 'postgres://rl@db/rl'], /--acme-dir/],
    [['--acme-email', 'ops@example.com'], /--acme-email applies to --https DOMAIN only/],
    [['--http-port', '8080'], /--http-port applies to --https DOMAIN only/],
    [['--acme-directory', 'https://ca.example/dir'], /--acme-directory applies/],
    [['--acme-dir', '/srv/acme'], /--acme-dir applies/],
    [['--hsts', '1d'], /--hsts applies to HTTPS: give --https DOMAIN/],
  ])('%p is refused', (argv, message) => {
    expect(() => run(argv)).toThrow(message)
  })

  test('over :memory: or a database with --acme-dir', () => {
    expect(run(['--https', 'a.example', '--data', ':memory:', '--acme-dir', '/srv/acme']).acmeDir).toBe('/srv/acme')
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

describe('users', () => {
  const users = (argv: string[], env: Record<string, string> = {}) => {
    const invocation = parseArgs(['users', ...argv], env)
    if (invocation.action !== 'users') throw new Error(`not a users command: ${invocation.action}`)
    return invocation.config
  }

  test('reads the command, its email and the way to the store', () => {
    expect(users(['disable', ' ana@rock-legends.com ', '--data', 'x.json', '--json'])).toMatchObject({
      command: 'disable',
      email: 'ana@rock-legends.com',
      data: 'x.json',
      json: true,
      passwordStdin: false,
    })
    expect(users(['list'], { ROCK_LEGENDS_DATA: 'y.json' })).toMatchObject({ data: 'y.json', page: undefined })
    expect(users(['list', '--limit', '5'])).toMatchObject({ data: './data/db.json', page: { limit: 5, offset: 0 } })
    expect(
      users(['add', '--email=a@b.co', '--name', 'A', '--password-stdin'], {
        ROCK_LEGENDS_URL: 'http://127.0.0.1:3000',
        ROCK_LEGENDS_API_KEYS: ' k1 ,k2',
      }),
    ).toMatchObject({ email: 'a@b.co', name: 'A', passwordStdin: true, url: 'http://127.0.0.1:3000', envApiKey: 'k1' })
  })

  test.each([[[]], [['--help']], [['list', '-h']]])('%p asks for the users help', (argv) => {
    expect(parseArgs(['users', ...argv])).toEqual({ action: 'users-help' })
  })

  test.each([
    [['remove', 'a@b.co']],
    [['disable']],
    [['disable', 'a@b.co', 'b@b.co']],
    [['add', '--email', 'a@b.co']],
    [['add', '--name', 'A']],
    [['add', '--email', 'a@b.co', '--name', 'A', '--password', 'secret123']],
    [['list', '--email', 'a@b.co']],
    [['list', '--offset', '-1']],
    [['list', '--url', 'ftp://x']],
    [['enable', 'a@b.co', '--api-key', ' ']],
  ])('%p is a usage error', (argv) => {
    expect(() => parseArgs(['users', ...argv])).toThrow(UsageError)
  })
})

describe('docs/command-line.md', () => {
  const doc = readFileSync(join(import.meta.dir, '../docs/command-line.md'), 'utf8')
  // The table's rows: | `--flag VALUE` | `VARIABLE` … | default | meaning |
  const rows = new Map(
    [...doc.matchAll(/^\| `--([a-z-]+)[^|]*\| ([^|]*) \| ([^|]*) \|/gm)].map((row) => [
      row[1] as string,
      { variable: row[2] as string, shown: row[3] as string },
    ]),
  )
  const flagged = (Object.values(SERVER_OPTIONS) as OptionDeclaration[]).filter((option) => option.flag !== undefined)

  test.each(flagged.map((option) => [option.flag, option] as const))(
    '--%s has a row with its variable and default',
    (flag, option) => {
      const row = rows.get(flag as string)
      // A flag for one start has no variable, which would outlive it.
      if (option.env === undefined) expect(row?.variable).toBe('none')
      else expect(row?.variable).toContain(`\`${option.env}\``)
      const unset = option.unset === undefined || option.unset === 'none' || option.unset === 'off'
      const shown =
        option.kind.bare !== undefined
          ? 'off'
          : option.default
            ? `\`${option.default}\``
            : unset
              ? (option.unset ?? 'none')
              : `\`${option.unset}\``
      expect(row?.shown).toBe(shown)
    },
  )

  test('names no flag the server does not take, and every variable without a flag', () => {
    expect([...rows.keys()].filter((flag) => !flagged.some((option) => option.flag === flag))).toEqual([])
    for (const option of Object.values(SERVER_OPTIONS) as OptionDeclaration[])
      if (option.flag === undefined) expect(doc).toContain(`\`${option.env}=`)
  })
})
