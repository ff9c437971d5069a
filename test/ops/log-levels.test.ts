import { afterEach, describe, expect, spyOn, test } from 'bun:test'
import {
  type AccessEntry,
  accessLevel,
  createLogger,
  flushLog,
  jsonAccess,
  LOG_LEVELS,
  type LogLevel,
  printLine,
  routeConsole,
} from '../../src/log.ts'

// Which lines each --log-level writes, in both formats, and the console taken over by the log.
const entry: AccessEntry = {
  method: 'GET',
  path: '/api/v1/artists/1',
  status: 200,
  bytes: 487,
  durationMs: 0.25,
  requestId: 'id-1',
  client: '127.0.0.1',
}
const health: AccessEntry = { ...entry, path: '/healthz', requestId: 'id-health', healthCheck: true }
const failed: AccessEntry = { ...entry, status: 503, requestId: 'id-503' }
const refused: AccessEntry = { ...entry, status: 404, requestId: 'id-404' }

/** What went to stderr and to stdout through the console, each call one text. */
function captured() {
  const err = spyOn(console, 'error').mockImplementation(() => {})
  const out = spyOn(console, 'log').mockImplementation(() => {})
  const texts = (spy: typeof err) => spy.mock.calls.flatMap((call) => String(call[0]).split('\n'))
  return {
    stderr: () => texts(err),
    stdout: () => texts(out),
    restore: () => {
      err.mockRestore()
      out.mockRestore()
    },
  }
}

afterEach(() => flushLog())

test.each([
  [entry, 'info'],
  [refused, 'info'],
  [failed, 'error'],
  [{ ...entry, status: 500 }, 'error'],
  [health, 'debug'],
  [{ ...health, status: 503 }, 'debug'],
] as const)('the access line of %o is at %s', (answered, level) => {
  expect(accessLevel(answered)).toBe(level)
  expect(JSON.parse(jsonAccess(answered)).level).toBe(level)
})

describe('--log-level', () => {
  /** Everything a logger at `level` writes of one line of each level and four answers, as JSON objects. */
  function written(level: LogLevel) {
    flushLog()
    const output = captured()
    try {
      const log = createLogger('json', level)
      log.debug('looking closer')
      log.info('seeded the catalogue', { artists: 32 })
      log.warn('cut off a torn journal line', { bytes: 7 })
      log.error('it broke', new Error('boom'))
      for (const answered of [entry, health, refused, failed]) log.access?.(answered)
      flushLog()
      return output.stderr().map((line) => JSON.parse(line) as Record<string, unknown>)
    } finally {
      output.restore()
    }
  }

  test.each([
    ['debug', ['looking closer', 'seeded the catalogue', 'cut off a torn journal line', 'it broke'], 4],
    ['info', ['seeded the catalogue', 'cut off a torn journal line', 'it broke'], 3],
    ['warn', ['cut off a torn journal line', 'it broke'], 1],
    ['error', ['it broke'], 1],
  ] as const)('%s writes %p and %d access lines', (level, messages, requests) => {
    const records = written(level)
    expect(records.filter((record) => record.message !== 'request').map((record) => record.message)).toEqual([
      ...messages,
    ])
    const lines = records.filter((record) => record.message === 'request')
    expect(lines).toHaveLength(requests)
    // Every line is at the level asked for or above.
    for (const record of records)
      expect(LOG_LEVELS.indexOf(record.level as LogLevel)).toBeGreaterThanOrEqual(LOG_LEVELS.indexOf(level))
    // The health check's line only at debug; the 5xx answer's at every level.
    expect(lines.some((line) => line.path === '/healthz')).toBe(level === 'debug')
    expect(lines.find((line) => line.status === 503)).toMatchObject({ level: 'error', requestId: 'id-503' })
  })

  test('the error keeps its stack, inside the JSON object', () => {
    const [record] = written('error')
    expect(String(record?.error)).toStartWith('Error: boom\n    at ')
    expect(record).toMatchObject({ level: 'error', message: 'it broke' })
  })

  test('pretty lines say their level but for info, as before', () => {
    flushLog()
    const output = captured()
    try {
      const log = createLogger('pretty', 'debug')
      log.debug('looking closer', { at: 1 })
      log.info('draining', { signal: 'SIGTERM', inFlight: 2 })
      log.warn('cut off a torn journal line', { journal: '/data/db.json.journal', at: 4096, bytes: 7, none: undefined })
      log.error('it broke')
      log.access?.(health)
      flushLog()
      expect(output.stderr()).toEqual([
        'debug: looking closer at=1',
        'draining signal=SIGTERM inFlight=2',
        'warning: cut off a torn journal line journal=/data/db.json.journal at=4096 bytes=7',
        'error: it broke',
        'GET /healthz 200 487 B 0.3 ms 127.0.0.1 id-health',
      ])
    } finally {
      output.restore()
    }
  })

  test('--log off writes nothing at any level', () => {
    const output = captured()
    try {
      const log = createLogger('off', 'debug')
      log.debug('a')
      log.info('b')
      log.warn('c')
      log.error('d', new Error('e'))
      expect(log.access).toBeUndefined()
      expect(output.stderr()).toEqual([])
    } finally {
      output.restore()
    }
  })
})

describe('the console, taken over by the log', () => {
  test('what libraries write through it becomes a log line at the level of the method; printLine keeps stdout', () => {
    flushLog()
    const output = captured()
    const restore = routeConsole(createLogger('json', 'info'))
    let stderr: string[]
    let stdout: string[]
    try {
      // As Bun's SQL client words it (src/js/internal/sql/postgres.ts in Bun's source).
      console.warn('bun:sql LISTEN "rl_events" failed, retrying: Failed to connect to /tmp/.s.PGSQL.5432')
      console.log('a library says %s', 'hello', { n: 1 })
      console.info('and informs')
      console.debug('below the level')
      console.error('could not do it:', new Error('boom'))
      printLine('the ready line')
    } finally {
      restore()
      stderr = output.stderr()
      stdout = output.stdout()
      output.restore()
    }
    const records = stderr.map((line) => JSON.parse(line) as Record<string, unknown>)
    expect(records).toEqual([
      {
        time: expect.any(String),
        level: 'warn',
        message: 'bun:sql LISTEN "rl_events" failed, retrying: Failed to connect to /tmp/.s.PGSQL.5432',
      },
      { time: expect.any(String), level: 'info', message: 'a library says hello { n: 1 }' },
      { time: expect.any(String), level: 'info', message: 'and informs' },
      {
        time: expect.any(String),
        level: 'error',
        message: 'could not do it:',
        error: expect.stringContaining('Error: boom'),
      },
    ])
    expect(stdout).toEqual(['the ready line'])
  })

  test('put back, the console writes as it did', () => {
    const restore = routeConsole(createLogger('off'))
    restore()
    const output = captured()
    try {
      console.error('plain')
      printLine('out')
      expect(output.stderr()).toEqual(['plain'])
      expect(output.stdout()).toEqual(['out'])
    } finally {
      output.restore()
    }
  })
})
