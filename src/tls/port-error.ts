/** A port the server may not listen on: exit 2 at start-up, with the fix. */
export class PortError extends Error {
  override name = 'PortError'
}
