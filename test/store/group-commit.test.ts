import { describe, expect, test } from 'bun:test'
import { GroupCommit } from '../../src/store/group-commit.ts'

/** A persist step that waits for `release()`, counting calls; it fails while `fail` is set. */
function slowPersist() {
  const state = { persists: 0, fail: false, release: () => {} }
  const persist = () => {
    state.persists++
    const { promise, resolve, reject } = Promise.withResolvers<void>()
    const fail = state.fail
    state.release = () => (fail ? reject(new Error('disk full')) : resolve())
    return promise
  }
  return { state, persist }
}

const tick = () => Bun.sleep(0)

describe('GroupCommit', () => {
  test('changes submitted while a commit is in flight share the next one', async () => {
    const { state, persist } = slowPersist()
    const commits = new GroupCommit(persist, () => {})
    const first = commits.submit(() => 'first')
    await tick()
    const waiting = Array.from({ length: 10 }, (_, i) => commits.submit(() => i))
    expect(state.persists).toBe(1)
    state.release()
    expect(await first).toBe('first')
    await tick()
    expect(state.persists).toBe(2)
    state.release()
    expect(await Promise.all(waiting)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9])
    expect(state.persists).toBe(2)
  })

  test('changes are applied in order, and acknowledged only after the commit that carries them', async () => {
    const { state, persist } = slowPersist()
    const log: string[] = []
    const commits = new GroupCommit(persist, () => {})
    const done = commits.submit(() => log.push('applied'))
    done.then(() => log.push('acknowledged'))
    await tick()
    expect(log).toEqual(['applied'])
    state.release()
    await done
    await tick()
    expect(log).toEqual(['applied', 'acknowledged'])
  })

  test('a change that throws fails alone', async () => {
    const { state, persist } = slowPersist()
    const commits = new GroupCommit(persist, () => {})
    const bad = commits
      .submit(() => {
        throw new Error('duplicate')
      })
      .catch((error: Error) => error.message)
    const good = commits.submit(() => 'ok')
    await tick()
    state.release()
    expect(await bad).toBe('duplicate')
    expect(await good).toBe('ok')
    expect(state.persists).toBe(1)
  })

  test('a failed commit rolls back and refuses every change in it; the next one goes through', async () => {
    const { state, persist } = slowPersist()
    const events: string[] = []
    const commits = new GroupCommit(persist, () => events.push('rollback'))
    state.fail = true
    const a = commits.submit(() => 'a').catch((error: Error) => events.push(`a: ${error.message}`))
    const b = commits.submit(() => 'b').catch((error: Error) => events.push(`b: ${error.message}`))
    await tick()
    state.release()
    await Promise.all([a, b])
    expect(events).toEqual(['rollback', 'a: disk full', 'b: disk full'])
    state.fail = false
    const later = commits.submit(() => 'later')
    await tick()
    state.release()
    expect(await later).toBe('later')
  })

  test('idle() waits for every pending commit', async () => {
    const { state, persist } = slowPersist()
    const commits = new GroupCommit(persist, () => {})
    commits.submit(() => 1)
    await tick()
    commits.submit(() => 2)
    let idle = false
    const waiting = commits.idle().then(() => {
      idle = true
    })
    state.release()
    await tick()
    expect(idle).toBe(false)
    state.release()
    await waiting
    expect(idle).toBe(true)
  })
})
