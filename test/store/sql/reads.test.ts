/**
 * Reads asked in one turn of the event loop share one statement (src/store/sql/reads.ts): the batcher's own rules,
 * then the SQL store over a real PostgreSQL, where a read never sees the database as it was before it was asked.
 */
import { afterEach, describe, expect, test } from 'bun:test'
import { ReadBatcher } from '../../../src/store/sql/reads.ts'
import { openSqlStore, type SqlStore } from '../../../src/store/sql/sql-store.ts'
import { skipWithoutPostgres, testPostgres } from '../../support/postgres.ts'

/** A batcher over a table in memory that records every key list it is asked for. */
function recorded(table: Map<number, string>, fail?: Error) {
  const asked: number[][] = []
  const batcher = new ReadBatcher(async (keys: number[]) => {
    asked.push([...keys])
    if (fail) throw fail
    return new Map(keys.flatMap((key) => (table.has(key) ? [[key, table.get(key) as string] as const] : [])))
  })
  return { batcher, asked }
}

describe('ReadBatcher', () => {
  const table = new Map([
    [1, 'one'],
    [2, 'two'],
    [3, 'three'],
  ])

  test('reads asked in one turn go in one call, each key once, each caller answered', async () => {
    const { batcher, asked } = recorded(table)
    const answers = await Promise.all([1, 2, 2, 9, 3, 1].map((key) => batcher.get(key)))
    expect(answers).toEqual(['one', 'two', 'two', undefined, 'three', 'one'])
    expect(asked).toEqual([[1, 2, 9, 3]])
  })

  test('a read asked while a call is in flight waits for the next call, never joins that one', async () => {
    const calls: { keys: number[]; answer: (value: Map<number, string>) => void }[] = []
    const batcher = new ReadBatcher(
      (keys: number[]) =>
        new Promise<Map<number, string>>((answer) => {
          calls.push({ keys: [...keys], answer })
        }),
    )
    const first = batcher.get(1)
    while (calls.length === 0) await Bun.sleep(1)
    // The first call went out (the database may already have read the row); the value changes; then a read is asked.
    const second = batcher.get(1)
    calls[0]?.answer(new Map([[1, 'before']]))
    expect(await first).toBe('before')
    while (calls.length === 1) await Bun.sleep(1)
    calls[1]?.answer(new Map([[1, 'after']]))
    expect(await second).toBe('after')
    expect(calls.map((call) => call.keys)).toEqual([[1], [1]])
  })

  test('a failed call rejects every caller of that call, and the next turn reads again', async () => {
    const broken = recorded(table, new Error('database away'))
    const outcomes = await Promise.allSettled([broken.batcher.get(1), broken.batcher.get(2), broken.batcher.get(1)])
    expect(outcomes.map((outcome) => outcome.status)).toEqual(['rejected', 'rejected', 'rejected'])
    expect(broken.asked).toEqual([[1, 2]])
  })

  test('more keys than one statement takes are split into several calls', async () => {
    const many = new Map(Array.from({ length: 2500 }, (_, i) => [i + 1, `#${i + 1}`] as const))
    const { batcher, asked } = recorded(many)
    const answers = await Promise.all([...many.keys()].map((key) => batcher.get(key)))
    expect(answers).toEqual([...many.values()])
    expect(asked.map((keys) => keys.length)).toEqual([1000, 1000, 500])
  })
})

const skip = skipWithoutPostgres()
const opened: SqlStore[] = []
afterEach(async () => {
  await Promise.all(opened.splice(0).map((store) => store.close()))
})
/**
 * A database for the test running, empty and migrated, emptied again after it once its stores are closed
 * (`emptyDatabase`). The reads, not the migrations, are under test: a new copy of a template, migrated, costs
 * PostgreSQL far more.
 */
const emptyDatabase = async () => (await testPostgres()).emptyDatabase()

describe.skipIf(skip)('SqlStore: reads by id over PostgreSQL', () => {
  test('many gets at once: each gets its own record, unknown and invalid ids undefined', async () => {
    const postgres = await testPostgres()
    const store = await openSqlStore(postgres.url(await emptyDatabase()), { pool: 2 })
    opened.push(store)
    await store.load(
      Array.from({ length: 50 }, (_, i) => ({
        name: `Artista ${i + 1}`,
        image: null,
        albums: [{ name: `Disco ${i + 1}`, image: null }],
      })),
    )
    const ids = [...Array.from({ length: 50 }, (_, i) => i + 1), 51, 0, -3, 2 ** 60]
    const artists = await Promise.all(ids.map((id) => store.artists.get(id)))
    expect(artists.map((artist) => artist?.name)).toEqual([
      ...Array.from({ length: 50 }, (_, i) => `Artista ${i + 1}`),
      undefined,
      undefined,
      undefined,
      undefined,
    ])
    const albums = await Promise.all([50, 1, 77].map((id) => store.albums.get(id)))
    expect(albums.map((album) => album && [album.id, album.artistId, album.name])).toEqual([
      [50, 50, 'Disco 50'],
      [1, 1, 'Disco 1'],
      undefined,
    ])
  })

  test('a write acknowledged on one replica is seen by the next read on another, even amid a burst of reads', async () => {
    const postgres = await testPostgres()
    const database = await emptyDatabase()
    const a = await openSqlStore(postgres.url(database), { pool: 2 })
    const b = await openSqlStore(postgres.url(database), { pool: 2 })
    opened.push(a, b)
    for (let round = 0; round < 20; round++) {
      const burst = Array.from({ length: 10 }, () => a.artists.get(round + 1))
      const created = await b.artists.insert({ name: `Nuevo ${round}` })
      // Asked after the insert was acknowledged: it must see it, whatever the burst before it saw.
      expect((await a.artists.get(created.id))?.name).toBe(`Nuevo ${round}`)
      await Promise.all(burst)
    }
  })
})
