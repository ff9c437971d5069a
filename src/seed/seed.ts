import { readFile } from 'node:fs/promises'
import { coverPath } from '../covers/cover-path.ts'
import type { CatalogueEntry } from '../model/catalogue.ts'
import type { Store } from '../store/store.ts'
import { parseCatalogue } from './catalogue-file.ts'
import { SeedError } from './seed-error.ts'

export { type CatalogueFile, parseCatalogue } from './catalogue-file.ts'
export { SeedError } from './seed-error.ts'

/** Where Bun refuses to run a macro: in a file under node_modules (its rule), this package's when a dependency. */
const UNDER_NODE_MODULES = /[\\/]node_modules[\\/]/

/**
 * The curated catalogue (`data/legends.json`) as store entries; a new copy at each call. The executable, and a run from
 * a clone, have it from the macro of src/seed/embedded-catalogue.ts: checked and converted when the executable is
 * built, and embedded as such, which spares each `--seed` start the check. Installed as a dependency, this package
 * sits under node_modules, where Bun refuses to load a module that imports a macro: there the same function reads and
 * checks the same file as it is called instead, which gives the same entries.
 */
export const builtInCatalogue = (): CatalogueEntry[] =>
  // A bundle (the executable, the npm package's in-process service) ran the macro when it was built: its module has
  // no path of its own on disk.
  UNDER_NODE_MODULES.test(import.meta.path ?? '')
    ? require('./built-in.ts').builtInEntries()
    : require('./embedded-catalogue.ts').embeddedCatalogue()

/** Reads and validates a catalogue file; any failure is a {@link SeedError} naming the file. */
export async function readCatalogueFile(path: string): Promise<CatalogueEntry[]> {
  let text: string
  try {
    text = await readFile(path, 'utf8')
  } catch (error) {
    throw new SeedError(`cannot read catalogue ${path}: ${(error as Error).message}`)
  }
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch (error) {
    throw new SeedError(`${path} is not valid JSON: ${(error as Error).message}`)
  }
  return parseCatalogue(value, path)
}

/** What seeding did. */
export type SeedOutcome = { seeded: true; artists: number; albums: number } | { seeded: false; reason: string }

/**
 * Loads the built-in catalogue (`true`) or a catalogue file into a store never written to, in one durable write. A
 * store written before is left alone, even one whose artists were all deleted, so `--seed` never puts the demo
 * catalogue into a store that held real data; the file is still validated, so a broken one is reported at once
 * rather than on the day a new store is made. Records without an `image` get their generated cover.
 */
export async function seedStore(store: Store, source: true | string): Promise<SeedOutcome> {
  const catalogue = source === true ? builtInCatalogue() : await readCatalogueFile(source)
  // Checked in the same write as the load: of several replicas seeding one database at once, one seeds.
  const loaded = await store.load(catalogue, { cover: coverPath, ifNeverWritten: true })
  return loaded
    ? { seeded: true, ...loaded }
    : { seeded: false, reason: 'the store was written before (--seed fills only a new store)' }
}
