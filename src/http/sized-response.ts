/**
 * Answers whose body the access log can measure. A Response does not say how large its body is, and a
 * `Content-Length` header would cost every answer more than the rest of the access log does (one header more for
 * Bun to copy into each Response: bench/RESULTS.md, "The size of each answer in the access log"); so the server's
 * answers carry their body instead, and the log measures it only when it writes a line.
 */
type Body = string | Uint8Array | Blob | null

/** A Response with the body it was made from. */
type Sized = Response & { sentBody?: Body }

/** `new Response(body, init)`, keeping `body` for {@link bodySize}. */
export function sizedResponse(body: Body, init?: ResponseInit): Response {
  const response: Sized = new Response(body, init)
  response.sentBody = body
  return response
}

/** The bytes of the body a {@link sizedResponse} was made from; `undefined` for any other (a stream, say). */
export function bodySize(response: Response): number | undefined {
  const body = (response as Sized).sentBody
  if (body === undefined) return undefined
  if (body === null) return 0
  if (typeof body === 'string') return Buffer.byteLength(body)
  return body instanceof Blob ? body.size : body.byteLength
}
