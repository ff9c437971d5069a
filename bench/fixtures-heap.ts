/**
 * `bun bench/fixtures-heap.ts [--memory MIB…]`: what the namespaces of `--fixtures` retain under the two attacks of
 * bench/fixtures-attacks.ts, measured in-process as the engine counts it: the app built as the server builds it, the
 * requests answered through its fixture front, then a full collection and the heap's size (`bun:jsc` heapStats), so
 * that garbage and the allocator's spare pages (which resident memory includes) do not count. Each attack runs once per
 * budget (`--memory`, repeatable; 16, 64 and 256 MiB by default) on a fresh app, and prints the heap before and after,
 * how many namespaces are left and what they say they hold (the sum `GET /__admin/namespaces` reports).
 */
import { heapStats } from 'bun:jsc'
import { parseArgs } from 'node:util'
import { createApp } from '../src/app.ts'
import { FixtureFront } from '../src/fixtures/front.ts'
import { NAMESPACE_LIMITS } from '../src/fixtures/namespaces.ts'
import { seedStore } from '../src/seed/seed.ts'
import { openMemoryStore } from '../src/store/document/memory.ts'
import { ATTACKS, type Attack, KEY, run } from './fixtures-attacks.ts'
import { describeMachine } from './machine.ts'

const { values } = parseArgs({ args: process.argv.slice(2), options: { memory: { type: 'string', multiple: true } } })
const budgets = (values.memory ?? ['16', '64', '256']).map(Number)
const heap = () => {
  Bun.gc(true)
  return heapStats().heapSize / 2 ** 20
}

async function measure(memoryMiB: number, attack: Attack) {
  const store = openMemoryStore()
  await seedStore(store, true)
  const front = new FixtureFront(store, await store.resetPoint(), {
    ...NAMESPACE_LIMITS,
    memoryBytes: memoryMiB * 2 ** 20,
  })
  const app = createApp({ store: front.store, apiKeys: [KEY], reset: front.reset, fixtureFront: front })
  const handle = (request: Request) => app.handle(request)
  const call = async (path: string, init: RequestInit) =>
    front.fetch(new Request(`http://localhost${path}`, init), handle)
  const before = heap()
  await run(attack, call)
  await Bun.sleep(100)
  const after = heap()
  const held = front.namespaces.retainedBytes / 2 ** 20
  const namespaces = front.namespaces.size
  await store.close()
  return { before, after, held, namespaces }
}

const machine = await describeMachine('none')
console.log(`Machine: ${machine.cpu}, ${machine.cores} cores, ${machine.memory}, Bun ${machine.bun}\n`)
console.log('| Attack | --fixtures-memory | Heap before | Heap after | Namespaces left | They say they hold |')
console.log('|---|---|---|---|---|---|')
for (const attack of ATTACKS)
  for (const budget of budgets) {
    const { before, after, held, namespaces } = await measure(budget, attack)
    console.log(
      `| ${attack.requests.toLocaleString('en')} ${attack.name} | ${budget} MiB | ${before.toFixed(0)} MiB | ${after.toFixed(0)} MiB | ${namespaces} | ${held.toFixed(1)} MiB |`,
    )
  }
