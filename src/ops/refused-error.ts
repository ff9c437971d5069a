/** An ops command refused to go on, and says why in its message: one line on stderr, exit 1. */
export class RefusedError extends Error {
  override name = 'RefusedError'
}
