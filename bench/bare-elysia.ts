/**
 * The framework's own start-up floor, a context case of bench/startup.ts: Elysia serving as many TypeBox-validated
 * routes as rock-legends does (23), each answering from its input, and nothing else: no store, no hooks, no docs.
 * Compiled like rock-legends, it shows how much of rock-legends' start-up the stack itself takes.
 */
import { Elysia, t } from 'elysia'

const ROUTES = 23
const Item = t.Object({
  id: t.Integer({ minimum: 1 }),
  name: t.String({ minLength: 1, maxLength: 200 }),
  year: t.Union([t.Integer(), t.Null()]),
})

function main() {
  const app = new Elysia().get('/healthz', () => ({ status: 'ok' as const }), {
    response: t.Object({ status: t.Literal('ok') }),
  })
  for (let i = 1; i < ROUTES; i++)
    app.post(`/items${i}/:id`, ({ params, body }) => ({ ...body, id: Number(params.id) }), {
      params: t.Object({ id: t.String({ pattern: '^[1-9][0-9]{0,15}$' }) }),
      query: t.Object({ limit: t.Optional(t.String({ pattern: '^[0-9]{1,3}$' })) }),
      body: Item,
      response: { 200: Item },
    })
  app.listen({ port: 0, hostname: '127.0.0.1', development: false, reusePort: false })
  console.log(`listening on http://127.0.0.1:${app.server?.port}`)
}

// Compiled with --bytecode, which has no top-level await; a function keeps the two builds alike.
main()
