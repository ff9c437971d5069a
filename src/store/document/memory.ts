import { Low, Memory } from 'lowdb'
import type { Store } from '../store.ts'
import type { Document } from './document.ts'
import { DocumentStore } from './document-store.ts'
import { inMemory } from './persistence.ts'

/** A store that lives and dies with the process (`--data :memory:`): for tests, demos and fixtures. */
export function openMemoryStore(): Store {
  return new DocumentStore(new Low<Document>(new Memory<Document>(), null as unknown as Document), inMemory)
}
