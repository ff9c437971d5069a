/**
 * What naming the origin in `/openapi.json`'s `servers` costs an answer: the document built once and sent as one
 * prebuilt text (the cheapest way to serve it) against its bytes with each request's origin spliced in (what the
 * server does, `withServer` in src/docs/document.ts), side by side in one process, answers built and their bodies
 * read. Rounds alternate so that load from elsewhere falls on both alike.
 *
 *   bun bench/openapi-origin.ts [requests per round, default 2000] [rounds, default 5]
 */
import { createApp } from '../src/app.ts'
import { namedSchemas } from '../src/docs/components.ts'
import { declaredRoutes } from '../src/docs/declared.ts'
import { buildDocument, originOf, withServer } from '../src/docs/document.ts'
import { openMemoryStore } from '../src/store/document/memory.ts'

const REQUESTS = Number(process.argv[2] ?? 2000)
const ROUNDS = Number(process.argv[3] ?? 5)

const app = createApp({ store: openMemoryStore() })
const document = buildDocument(declaredRoutes(app.routes), namedSchemas)
const prebuilt = JSON.stringify(document)
const spliced = withServer(document)
const headers = { 'content-type': 'application/json' }

const variants = {
  prebuilt: (_request: Request) => new Response(prebuilt, { headers }),
  spliced: (request: Request) => new Response(spliced(originOf(request.url)), { headers }),
}

async function round(answer: (request: Request) => Response): Promise<number> {
  const start = performance.now()
  for (let index = 0; index < REQUESTS; index++) {
    const request = new Request(`http://host-${index % 100}.example:3000/openapi.json`)
    await answer(request).arrayBuffer()
  }
  return performance.now() - start
}

const times: Record<keyof typeof variants, number[]> = { prebuilt: [], spliced: [] }
await round(variants.prebuilt)
await round(variants.spliced)
for (let index = 0; index < ROUNDS; index++)
  for (const name of Object.keys(variants) as (keyof typeof variants)[]) times[name].push(await round(variants[name]))

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] as number
const perAnswer = (name: keyof typeof variants) => (median(times[name]) * 1000) / REQUESTS
console.log(`document: ${prebuilt.length} characters; ${REQUESTS} answers a round, ${ROUNDS} rounds, median round`)
for (const name of Object.keys(variants) as (keyof typeof variants)[])
  console.log(`${name.padEnd(9)} ${perAnswer(name).toFixed(1)} µs an answer`)
console.log(`spliced / prebuilt: ${(perAnswer('spliced') / perAnswer('prebuilt')).toFixed(2)}x`)
