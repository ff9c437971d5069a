/**
 * `bun bench/fixtures-memory.ts [--memory MIB] [BINARY…]`: what a fixture server (`--fixtures`) retains when clients send it large
 * bodies across many namespaces, in two attacks, each on a fresh server over `:memory:` of each executable
 * (`dist/rock-legends` by default), 50 requests at a time: 10,000 `POST /api/v1/artists` without credentials (each
 * answered 401, each journaled) spread over 500 namespaces, each with an 8 KiB JSON body of empty objects
 * (`[{},{},…]`, the body that weighs most once parsed); and 20,000 `PUT /api/v1/artists/1` with the service key and
 * a 10,000-character description, spread over 20 namespaces (each change kept for reconnecting event streams). Prints
 * the resident memory before and 5 s after each, with the machine. `--memory` starts every server with
 * `--fixtures-memory MIB`.
 */
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { freePort } from '../test/support/binary.ts'
import { describeMachine } from './machine.ts'

const { values, positionals } = parseArgs({
  args: process.argv.slice(2),
  options: { memory: { type: 'string' } },
  allowPositionals: true,
})
const binaries = positionals
/** `--fixtures-memory` for every server, when given (`--memory MIB`); else the servers' default. */
const budget = values.memory === undefined ? [] : ['--fixtures-memory', values.memory]
if (binaries.length === 0) binaries.push(join(import.meta.dir, '../dist/rock-legends'))
const body = `[${Array(2730).fill('{}').join(',')}]`

const KEY = 'k'.repeat(24)
const description = 'x'.repeat(10_000)

/** Sends request `i` of an attack to `base`. */
type Attack = (base: string, i: number) => Promise<unknown>
const ATTACKS: [string, number, Attack][] = [
  [
    `anonymous POSTs of ${body.length} bytes over 500 namespaces`,
    10_000,
    (base, i) =>
      fetch(`${base}/api/v1/artists`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'rock-legends-namespace': `ns-${i % 500}` },
        body,
      }).then((response) => response.text()),
  ],
  [
    'PUTs of a 10,000-character description over 20 namespaces',
    20_000,
    (base, i) =>
      fetch(`${base}/api/v1/artists/1`, {
        method: 'PUT',
        headers: { 'content-type': 'application/json', 'rock-legends-namespace': `ns-${i % 20}`, 'x-api-key': KEY },
        body: JSON.stringify({ name: `Charly ${i}`, description }),
      }).then((response) => response.text()),
  ],
]

async function attack(binary: string, requests: number, send: Attack) {
  const port = freePort()
  const child = Bun.spawn(
    [
      binary,
      '--port',
      String(port),
      '--data',
      ':memory:',
      '--seed',
      '--fixtures',
      '--log',
      'off',
      '--api-key',
      KEY,
      ...budget,
    ],
    { stdout: 'pipe' },
  )
  await child.stdout.getReader().read()
  const rss = () => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${child.pid}/status`, 'utf8'))?.[1]) / 1024
  const before = rss()
  const started = performance.now()
  for (let i = 0; i < requests; i += 50)
    await Promise.all(Array.from({ length: 50 }, (_, j) => send(`http://127.0.0.1:${port}`, i + j)))
  const seconds = (performance.now() - started) / 1000
  // What stays, not the garbage of the last requests: the engine collects and gives memory back within seconds.
  await Bun.sleep(5000)
  const after = rss()
  child.kill()
  await child.exited
  return { before, after, seconds }
}

const machine = await describeMachine('none')
console.log(`Machine: ${machine.cpu}, ${machine.cores} cores, ${machine.memory}, Bun ${machine.bun}`)
console.log(`--fixtures-memory: ${values.memory === undefined ? "each server's default" : `${values.memory} MiB`}\n`)
console.log('| Attack | Executable | RSS before | RSS after | Took |')
console.log('|---|---|---|---|---|')
for (const [name, requests, send] of ATTACKS)
  for (const binary of binaries) {
    const { before, after, seconds } = await attack(binary, requests, send)
    console.log(
      `| ${requests.toLocaleString('en')} ${name} | ${binary} | ${before.toFixed(0)} MB | ${after.toFixed(0)} MB | ${seconds.toFixed(1)} s |`,
    )
  }
