import legends from '../../data/legends.json' with { type: 'json' }
import type { CatalogueEntry } from '../model/catalogue.ts'
import { parseCatalogue } from './catalogue-file.ts'

/** What the embedded catalogue is called in messages. */
export const BUILT_IN = 'the built-in catalogue'

/**
 * The curated catalogue (`data/legends.json`) as store entries, checked and converted when the executable is built:
 * src/seed/embedded-catalogue.ts imports this `with { type: 'macro' }`, so Bun runs it while bundling (and, from
 * source, as it loads that module) and puts what it returns in its place. A `data/legends.json` that breaks the
 * catalogue rules fails the build with the SeedError that `--seed` would print; an executable's `--seed` neither
 * checks nor converts the catalogue again (about 10 ms of CPU per start, bench/startup-cpu.ts). Its album years were
 * checked against the build's next year, a bound that only grows. Where Bun runs no macro (this package installed
 * under node_modules), src/seed/seed.ts calls it as it is.
 */
export function builtInEntries(): CatalogueEntry[] {
  try {
    return parseCatalogue(legends, BUILT_IN)
  } catch (error) {
    // Bun fails the build on a macro's exception without its message: say first what is wrong.
    console.error(`rock-legends: ${(error as Error).message}`)
    throw error
  }
}
