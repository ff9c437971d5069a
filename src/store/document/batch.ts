import type { Credential } from '../../model/credential.ts'
import { type ArtistChange, artistOfChange } from '../../model/history.ts'
import type { KeptAnswer, KeptEntry } from '../../model/kept-answer.ts'
import type { Collection, StoreDocument, StoreRecord } from '../../model/store-document.ts'
import type { KeyedRequest } from '../idempotency.ts'
import { StoreUnavailableError } from '../store.ts'
import type { JournalEntry, Persistence } from './persistence.ts'
import type { Records, Rewind } from './records.ts'

/**
 * The changes of one group commit, and everything needed to make them durable or take them back: the records put
 * since the batch opened (its journal entry), the counters and records as they were before it, and whether it
 * replaced the whole document. A batch owns this state; the records it changes know nothing of it.
 */
export class Batch {
  /** The records put in this batch, by id: its journal entry. */
  private readonly changed = new Map<Collection, Map<number, StoreRecord>>()
  /** Answers kept for idempotency keys in this batch, journaled with it. */
  private readonly kept: KeptEntry[] = []
  /** The ids of the albums removed in this batch, for its journal entry. */
  private readonly removedAlbums = new Set<number>()
  /** The claims those answers settle once the batch is durable, or free should it fail. */
  private readonly answered: { request: KeyedRequest; claim: string }[] = []
  /** The changes added to artists' histories in this batch, for its journal entry. */
  private readonly changes: ArtistChange[] = []
  private rewindTo: Rewind | undefined
  private replacedAll = false
  /** Whether the batch is committed even with no change: a probe of the disk. */
  private probing = false

  /** A batch of changes to `records`. */
  constructor(private readonly records: Records) {}

  /** Whether this batch has anything to make durable. */
  get isEmpty(): boolean {
    return (
      !this.replacedAll &&
      this.changed.size === 0 &&
      this.removedAlbums.size === 0 &&
      this.kept.length === 0 &&
      this.changes.length === 0 &&
      !this.probing
    )
  }

  /**
   * Makes the batch a commit even with no change: its journal entry then holds the counters alone, which replaying
   * changes nothing. Whether such a commit goes through tells whether the disk takes commits again.
   */
  probe(): void {
    this.probing = true
  }

  /** The id of a new record of `collection`, taken from its counter. */
  nextId(collection: Collection): number {
    this.rewind()
    return this.records.nextId(collection)
  }

  /** Stores a new or changed record, to be journaled with this batch and taken back should it fail. */
  put<C extends Collection>(name: C, record: StoreDocument[C][number]): void {
    const previous = this.records.put(name, record)
    if (previous) this.rewind().replaced.push([this.records.doc, name, previous])
    this.record(name, record)
  }

  /** Removes an album: journaled with this batch (its id), and put back should the batch fail. */
  remove(name: 'albums', record: StoreDocument['albums'][number]): void {
    this.records.remove(name, record)
    this.rewind().replaced.push([this.records.doc, name, record])
    // A record put earlier in this batch and removed now is not written: replay would only remove it again.
    this.changed.get(name)?.delete(record.id)
    this.removedAlbums.add(record.id)
  }

  /**
   * Adds a change to its artist's history (`fields` without its id, which this gives): journaled with this batch,
   * and taken back should it fail.
   */
  change(fields: Omit<ArtistChange, 'id'>): ArtistChange {
    const rewind = this.rewind()
    const change = { id: this.records.nextChangeId(), ...fields } as ArtistChange
    const artistId = artistOfChange(change)
    const previous = this.records.addChange(change)
    rewind.history ??= new Map()
    if (!rewind.history.has(artistId)) rewind.history.set(artistId, previous)
    this.changes.push(change)
    return change
  }

  /**
   * Stores a changed record that is bookkeeping (a credential's last use): journaled with this batch, never taken
   * back on its own account.
   */
  note<C extends Collection>(name: C, record: StoreDocument[C][number]): void {
    this.records.put(name, record)
    this.record(name, record)
  }

  /**
   * Keeps `answer` for the key `request` claimed as `claim`, journaled with this batch, so in the same commit as the
   * record it answers: replayed once the batch is durable, and gone with the record should it fail. False, and
   * nothing kept, when the claim was lost.
   */
  answer(request: KeyedRequest, claim: string, answer: KeptAnswer, expiresAt: number): boolean {
    const entry = this.records.idempotency.answer(request, claim, answer, expiresAt)
    if (!entry) return false
    this.kept.push(entry)
    this.answered.push({ request, claim })
    return true
  }

  /**
   * Removes credentials that can never be used again. Not journaled, and needing no undo: whatever state a dead
   * credential was last written in is dead too, so the data file may keep it until its next compaction, and a
   * rollback may leave it gone.
   */
  drop(dead: readonly Credential[]): void {
    this.records.drop(dead)
  }

  /** Replaces the whole document (a restore): the batch then writes the whole document, not a journal entry. */
  replaceDocument(document: StoreDocument): void {
    const rewind = this.rewind()
    const previous = this.records.replaceDocument(document)
    rewind.document ??= previous
    this.replacedAll = true
  }

  /** Makes the batch durable through `persistence`; rejects with {@link StoreUnavailableError} when it cannot. */
  async persist(persistence: Persistence): Promise<void> {
    if (this.isEmpty) return
    try {
      if (this.replacedAll) await persistence.replace(this.records.snapshot())
      else await persistence.commit(this.entry(), () => this.records.snapshot())
    } catch (error) {
      throw new StoreUnavailableError(`the change could not be saved: ${(error as Error).message}`, { cause: error })
    }
    for (const { request, claim } of this.answered) this.records.idempotency.settle(request, claim)
  }

  /** Takes the batch's changes back, after a failed {@link persist}. */
  rollback(): void {
    if (this.rewindTo) this.records.rewind(this.rewindTo)
    for (const { request, claim } of this.answered) this.records.idempotency.release(request, claim)
  }

  private record(name: Collection, record: StoreRecord): void {
    const changed = this.changed.get(name) ?? new Map<number, StoreRecord>()
    this.changed.set(name, changed.set(record.id, record))
  }

  /** The rewind of this batch, begun at its first change that needs one. */
  private rewind(): Rewind {
    this.rewindTo ??= {
      counters: { ...this.records.doc.counters },
      replaced: [],
      lastChangeId: this.records.lastChangeId,
    }
    return this.rewindTo
  }

  private entry(): JournalEntry {
    const entry: JournalEntry = { counters: { ...this.records.doc.counters } }
    for (const [name, records] of this.changed)
      if (records.size > 0) (entry as Record<Collection, StoreRecord[]>)[name] = [...records.values()]
    if (this.removedAlbums.size > 0) entry.removed = { albums: [...this.removedAlbums] }
    if (this.changes.length > 0) entry.history = this.changes
    if (this.kept.length > 0) entry.idempotency = this.kept
    return entry
  }
}
