import { DocumentStore } from '../../src/store/document/document-store.ts'
import type { Persistence } from '../../src/store/document/persistence.ts'

/**
 * An in-memory store that counts its durable writes (group commits and whole-document replacements), and can be
 * told to fail them, like a full disk would.
 */
export function countingStore() {
  const state = { writes: 0, failing: false }
  const persist = async () => {
    if (state.failing) throw new Error('ENOSPC: no space left on device')
    state.writes += 1
  }
  const persistence: Persistence = { commit: persist, replace: persist, close: async () => {} }
  const store = new DocumentStore(null, persistence)
  return { store, state }
}
