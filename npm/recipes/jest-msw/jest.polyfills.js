// What jsdom's global scope lacks and MSW needs, from Node's own modules and from undici (Node's fetch), as MSW's
// documentation gives them for Jest with jsdom. require()s, in this order: undici needs TextEncoder and the streams
// when it loads. Configurable: MSW's interceptors wrap some of them in turn.
const { TextDecoder, TextEncoder } = require('node:util')
const { ReadableStream, TransformStream, WritableStream } = require('node:stream/web')
const { BroadcastChannel, MessagePort } = require('node:worker_threads')

const define = (globals) => {
  for (const [name, value] of Object.entries(globals))
    Object.defineProperty(globalThis, name, { value, writable: true, configurable: true })
}
define({ TextDecoder, TextEncoder, ReadableStream, TransformStream, WritableStream, BroadcastChannel, MessagePort })

const { Blob, File } = require('node:buffer')
const { fetch, Headers, FormData, Request, Response } = require('undici')

define({ fetch, Blob, File, Headers, FormData, Request, Response })
