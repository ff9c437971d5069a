// The store's start-up errors, in a module of their own: the command line tells them apart without loading the
// file store, which is only loaded when a data file is named.

/** Raised when the data file exists but cannot be read or is not a Rock Legends document. */
export class DataFileError extends Error {
  override name = 'DataFileError'
}

/** Raised when another live process holds the data file. */
export class DataFileLockedError extends Error {
  override name = 'DataFileLockedError'
}
