import { describe, expect, test } from 'bun:test'
import { GroupCommit } from '../../src/store/group-commit.ts'

/** A write that takes until `finish()` is called, counting how often it ran. */
function slowWrite() {
  const state = { writes: 0, fail: false, release: () => {} }
  const write = () => {
    state.writes++
    const { promise, resolve, reject } = Promise.withResolvers<void>()
    const fail = state.fail
    state.release = () => (fail ? reject(new Error('disk full')) : resolve())
    return promise
  }
  return { state, write }
}

describe('GroupCommit', () => {
  test('requests made while a write is in flight share the next write', async () => {
    const { state, write } = slowWrite()
    const commits = new GroupCommit(write)
    const first = commits.request()
    const waiting = Array.from({ length: 10 }, () => commits.request())
    expect(state.writes).toBe(1)
    state.release()
    await first
    await Bun.sleep(0)
    expect(state.writes).toBe(2)
    state.release()
    await Promise.all(waiting)
    expect(state.writes).toBe(2)
  })

  test('a request is acknowledged only by a write that started after it', async () => {
    const { state, write } = slowWrite()
    const commits = new GroupCommit(write)
    const first = commits.request()
    let secondDone = false
    const second = commits.request().then(() => {
      secondDone = true
    })
    state.release()
    await first
    expect(secondDone).toBe(false)
    await Bun.sleep(0)
    state.release()
    await second
    expect(secondDone).toBe(true)
  })

  test('a failed write rejects its batch and the one queued behind it, after rolling back', async () => {
    const { state, write } = slowWrite()
    const events: string[] = []
    const commits = new GroupCommit(write, async () => () => events.push('rollback'))
    state.fail = true
    const inFlight = commits.request().catch((error: Error) => events.push(`in flight: ${error.message}`))
    const queued = commits.request().catch((error: Error) => events.push(`queued: ${error.message}`))
    state.release()
    await Promise.all([inFlight, queued])
    expect(events).toEqual(['rollback', 'in flight: disk full', 'queued: disk full'])
    expect(state.writes).toBe(1)
    state.fail = false
    const later = commits.request()
    state.release()
    await later
    expect(state.writes).toBe(2)
  })

  test('idle() waits for every pending write', async () => {
    const { state, write } = slowWrite()
    const commits = new GroupCommit(write)
    commits.request()
    commits.request()
    let idle = false
    const waiting = commits.idle().then(() => {
      idle = true
    })
    state.release()
    await Bun.sleep(0)
    expect(idle).toBe(false)
    state.release()
    await waiting
    expect(idle).toBe(true)
  })
})
