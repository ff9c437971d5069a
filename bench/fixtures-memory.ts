/**
 * `bun bench/fixtures-memory.ts [--memory MIB] [BINARY…]`: what a fixture server (`--fixtures`) retains when clients
 * send it large bodies across many namespaces, in the two attacks of bench/fixtures-attacks.ts, each on a fresh server
 * over `:memory:` of each executable (`dist/rock-legends` by default), 50 requests at a time: 10,000 `POST /api/v1/artists` without credentials (each
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
import { ATTACKS, type Attack, KEY, run } from './fixtures-attacks.ts'
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
async function measure(binary: string, attack: Attack) {
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
  await run(attack, (path, init) => fetch(`http://127.0.0.1:${port}${path}`, init))
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
for (const attack of ATTACKS)
  for (const binary of binaries) {
    const { before, after, seconds } = await measure(binary, attack)
    console.log(
      `| ${attack.requests.toLocaleString('en')} ${attack.name} | ${binary} | ${before.toFixed(0)} MB | ${after.toFixed(0)} MB | ${seconds.toFixed(1)} s |`,
    )
  }
