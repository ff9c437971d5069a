/**
 * Live updates across replicas: two compiled executables over one PostgreSQL database. A change written through replica
 * B reaches a stream on replica A, with the same event id B's own streams give it, and a client may come back with that
 * id to either replica.
 */
import { afterEach, describe, expect, test } from 'bun:test'
import { dataOf, type SseReader, sse } from '../events/sse.ts'
import { type RunningBinary, startBinary } from '../support/binary.ts'
import { skipWithoutPostgres, type TestPostgres, testPostgres } from '../support/postgres.ts'

const skip = skipWithoutPostgres()
const KEY = 'replica-events-key'
const asService = { 'x-api-key': KEY, 'content-type': 'application/json' }

let postgres: TestPostgres
const running: RunningBinary[] = []
const streams: SseReader[] = []

// The replicas stopped after their test; its database is emptied for the next test once they have (`emptyDatabase`).
afterEach(async () => {
  await Promise.all(streams.splice(0).map((stream) => stream.close()))
  await Promise.all(running.splice(0).map((replica) => replica.stop().catch(() => 0)))
})

/**
 * Starts `count` replicas over a database of the test's own with the schema and no rows (`emptyDatabase`): the same
 * start as a new copy they migrate, for far less of PostgreSQL's work; the events, not the migrations, are under test.
 */
async function replicas(count: number) {
  postgres ??= await testPostgres()
  const url = postgres.url(await postgres.emptyDatabase())
  const started = await Promise.all(
    Array.from({ length: count }, () => startBinary(['--data', url, '--port', '0', '--api-key', KEY, '--log', 'off'])),
  )
  running.push(...started)
  return started
}

async function open(replica: RunningBinary, headers: Record<string, string> = {}) {
  const response = await fetch(`${replica.url}/api/v1/events`, { headers })
  expect(response.status).toBe(200)
  const stream = sse(response)
  streams.push(stream)
  return stream
}

const post = (replica: RunningBinary, path: string, body: object) =>
  fetch(`${replica.url}${path}`, { method: 'POST', headers: asService, body: JSON.stringify(body) })

describe.skipIf(skip)('the event stream across replicas over PostgreSQL', () => {
  test('a change written on B reaches A’s stream, with the id B gives it; either replica resumes from it', async () => {
    const [a, b] = (await replicas(2)) as [RunningBinary, RunningBinary]
    const onA = await open(a)
    const onB = await open(b)
    const readyA = await onA.nextEvent()
    const readyB = await onB.nextEvent()
    expect([readyA.event, readyB.event]).toEqual(['ready', 'ready'])
    expect(readyA.id).toBe(readyB.id as string)

    const created = await post(b, '/api/v1/artists', { name: 'Fito Páez' })
    expect(created.status).toBe(201)
    const artist = (await created.json()) as { id: number; name: string }
    const album = await (await post(a, `/api/v1/artists/${artist.id}/albums`, { name: 'Giros', year: 1985 })).json()
    for (const stream of [onA, onB]) {
      const first = await stream.nextEvent()
      expect(first.event).toBe('artist-created')
      expect(dataOf(first)).toEqual({
        url: `/api/v1/artists/${artist.id}`,
        artist,
        at: expect.any(String),
        by: 'service',
      })
      const second = await stream.nextEvent()
      expect(second.event).toBe('album-created')
      expect(dataOf(second).album).toEqual(album)
    }

    // The same ids on both: a client that saw the artist on A resumes on B with the album.
    await onA.close()
    const again = await open(a, { 'last-event-id': readyA.id as string })
    const replayed = await again.nextEvent()
    expect(replayed.event).toBe('artist-created')
    const onBAfter = await open(b, { 'last-event-id': replayed.id as string })
    const missed = await onBAfter.nextEvent()
    expect(missed.event).toBe('album-created')
    expect(dataOf(missed).album).toEqual(album)
    expect((await onBAfter.nextEvent()).event).toBe('ready')
  }, 60_000)

  test('many writes on both replicas at once: each stream gets every change once, in the same order', async () => {
    const [a, b] = (await replicas(2)) as [RunningBinary, RunningBinary]
    const onA = await open(a)
    const onB = await open(b)
    await onA.nextEvent()
    await onB.nextEvent()
    const writes = 40
    const answers = await Promise.all(
      Array.from({ length: writes }, (_, i) => post(i % 2 === 0 ? a : b, '/api/v1/artists', { name: `Artist ${i}` })),
    )
    expect(answers.every((answer) => answer.status === 201)).toBe(true)
    const idsOf = async (stream: SseReader) => {
      const ids: string[] = []
      for (let i = 0; i < writes; i++) ids.push((await stream.nextEvent()).id as string)
      return ids
    }
    const [fromA, fromB] = await Promise.all([idsOf(onA), idsOf(onB)])
    expect(new Set(fromA).size).toBe(writes)
    expect(fromB).toEqual(fromA)
  }, 60_000)
})
