/** Raised for a flag or variable the command line cannot use: one line, exit code 2. */
export class UsageError extends Error {
  override name = 'UsageError'
}
