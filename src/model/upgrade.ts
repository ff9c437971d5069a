import { DEFAULT_KIND } from './album.ts'
import type { StoreDocument, StoredDocument } from './store-document.ts'

/**
 * Every difference between what earlier builds wrote to a data file or its journal and the form the store holds now,
 * made good when the file is read. This module is the only place that knows those older forms: the promise that
 * a data file written by any earlier build loads in every later one (docs/design-decisions.md, "Data files from
 * earlier builds") is kept here, one step per difference, each with a test that loads a file written in the old form:
 *
 * | Step                   | Written by                                          | Test                                 |
 * | ---------------------- | --------------------------------------------------- | ------------------------------------ |
 * | {@link withoutNulls}   | 0.1 builds: null for an unset artist or album field | test/store/json-file.test.ts         |
 * | {@link withDisabledAt} | builds before accounts could be disabled            | test/store/disabled-users.test.ts    |
 * | {@link withEpochs}     | builds before credentials epochs                    | test/store/credentials-epoch.test.ts |
 * | {@link withKinds}      | builds before albums had a kind                     | test/store/album-kinds.test.ts       |
 *
 * Each step keeps the records already in the current form as they are (no copies), so a current file costs one pass.
 * The document's schema (`StoreDocument`) accepts the older forms, and a field a step adds is optional there.
 */
export function upgradeDocument(document: StoredDocument): StoreDocument {
  withDisabledAt(document)
  withEpochs(document)
  const upgraded = withoutNulls(document)
  withKinds(upgraded)
  return upgraded
}

/** Every album with its `kind`: a studio album when the file has none (or null, as 0.1 builds wrote unset fields). */
function withKinds(document: StoreDocument): void {
  const albums = document.albums
  for (let i = 0; i < albums.length; i++) {
    const album = albums[i] as StoreDocument['albums'][number]
    if (album.kind === undefined) albums[i] = { ...album, kind: DEFAULT_KIND }
  }
}

const hasNull = (record: object) => Object.values(record).includes(null)

/** Artists and albums with their null fields left out: unset fields are absent in the store and in every answer. */
function withoutNulls(document: StoredDocument): StoreDocument {
  for (const records of [document.artists, document.albums] as object[][])
    for (let i = 0; i < records.length; i++) {
      const record = records[i] as object
      if (hasNull(record)) records[i] = Object.fromEntries(Object.entries(record).filter(([, value]) => value !== null))
    }
  return document as StoreDocument
}

/** Every user with its `disabledAt`: null (enabled) when the file has none. */
function withDisabledAt(document: StoredDocument): void {
  const users = document.users as { disabledAt?: string | null }[]
  for (let i = 0; i < users.length; i++) {
    const user = users[i] as { disabledAt?: string | null }
    if (user.disabledAt === undefined) users[i] = { ...user, disabledAt: null }
  }
}

/** Every user with its `credentialsEpoch` and every credential with its `epoch`: 0 when the file has none. */
function withEpochs(document: StoredDocument): void {
  const users = document.users as { credentialsEpoch?: number }[]
  for (let i = 0; i < users.length; i++) {
    const user = users[i] as { credentialsEpoch?: number }
    if (user.credentialsEpoch === undefined) users[i] = { ...user, credentialsEpoch: 0 }
  }
  const credentials = document.credentials as { epoch?: number }[]
  for (let i = 0; i < credentials.length; i++) {
    const credential = credentials[i] as { epoch?: number }
    if (credential.epoch === undefined) credentials[i] = { ...credential, epoch: 0 }
  }
}
