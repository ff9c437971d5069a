// The store's start-up errors, in a module of their own: the command line tells them apart without loading the
// file store, which is only loaded when a data file is named.

/** Raised when the data file exists but cannot be read or is not a Rock Legends document. */
export class DataFileError extends Error {
  override name = 'DataFileError'
}

/**
 * A {@link DataFileError} for a data file (or its journal) that is damaged: `message` says how, and the operator is
 * pointed to the commands that name every problem and put back a backup.
 */
export function damagedDataFile(file: string, message: string): DataFileError {
  return new DataFileError(
    `${message}. \`rock-legends verify --data ${file}\` names every problem; \`rock-legends restore BACKUP --data ${file}\` puts back a backup (keeping the damaged files aside)`,
  )
}

/** Raised when another live process holds the data file. */
export class DataFileLockedError extends Error {
  override name = 'DataFileLockedError'
}
