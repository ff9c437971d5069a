/**
 * A command refused to go on (a store in use, a server that refuses the operator or cannot be reached), and says why
 * in its message: one line on stderr, exit 1.
 */
export class RefusedError extends Error {
  override name = 'RefusedError'
}
