import type { CatalogueEntry } from '../model/catalogue.ts'
import { builtInEntries } from './built-in.ts' with { type: 'macro' }

/**
 * The built-in catalogue as the macro gives it (src/seed/built-in.ts): checked and converted while the executable is
 * built, and embedded as such; a new copy at each call. src/seed/seed.ts loads this module only where Bun runs macros.
 */
export const embeddedCatalogue = (): CatalogueEntry[] => builtInEntries()
