/**
 * The changes a store announces while `work` runs, once `expected` of them are delivered (or 2 s have passed). Only
 * changes made after `work` started count: over PostgreSQL the feed reads a change once its transaction is visible to
 * every replica, so a change committed just before the subscription (a test's own setup) may still be delivered
 * after it.
 *
 * @example
 * const changes = await announced(store, () => store.albums.remove(1, 2), 1)
 */
import type { ChangeEvent } from '../../src/store/changes.ts'
import type { Store } from '../../src/store/store.ts'

export async function announced(
  store: Pick<Store, 'changes'>,
  work: () => Promise<unknown>,
  expected = 1,
): Promise<ChangeEvent['change'][]> {
  const events: ChangeEvent[] = []
  const subscription = await store.changes.subscribe({ change: (event) => events.push(event), end: () => {} })
  // Two milliseconds apart, so that no change of the setup carries the same millisecond as the start of `work`.
  await Bun.sleep(2)
  const started = Date.now()
  const during = () => events.filter((event) => event.at >= started)
  await work()
  for (let i = 0; i < 200 && during().length < expected; i++) await Bun.sleep(10)
  // A moment more: a change beyond those expected would show here.
  await Bun.sleep(20)
  subscription.cancel()
  return during().map((event) => event.change)
}
