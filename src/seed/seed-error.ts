/** Raised when a catalogue cannot be read or is not valid; start-up stops with its message and exit code 2. */
export class SeedError extends Error {
  override name = 'SeedError'
}
