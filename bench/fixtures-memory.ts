/**
 * `bun bench/fixtures-memory.ts [BINARY…]`: what a fixture server (`--fixtures`) retains when anonymous clients send
 * it large bodies across many namespaces. For each executable (`dist/rock-legends` by default), a fresh server over
 * `:memory:` gets 10,000 `POST /api/v1/artists` without credentials (each answered 401, each journaled), 50 at a time,
 * spread over 500 namespaces, each with an 8 KiB JSON body of empty objects (`[{},{},…]`, the body that weighs most
 * once parsed); prints its resident memory before and after, with the machine.
 */
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { freePort } from '../test/support/binary.ts'
import { describeMachine } from './machine.ts'

const binaries = process.argv.slice(2)
if (binaries.length === 0) binaries.push(join(import.meta.dir, '../dist/rock-legends'))
const body = `[${Array(2730).fill('{}').join(',')}]`

async function attack(binary: string): Promise<{ before: number; after: number; seconds: number }> {
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
      'k'.repeat(24),
    ],
    { stdout: 'pipe' },
  )
  await child.stdout.getReader().read()
  const rss = () => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${child.pid}/status`, 'utf8'))?.[1]) / 1024
  const before = rss()
  const started = performance.now()
  for (let i = 0; i < 10_000; i += 50)
    await Promise.all(
      Array.from({ length: 50 }, (_, j) =>
        fetch(`http://127.0.0.1:${port}/api/v1/artists`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'rock-legends-namespace': `ns-${(i + j) % 500}` },
          body,
        }).then((response) => response.text()),
      ),
    )
  const seconds = (performance.now() - started) / 1000
  await Bun.sleep(500)
  const after = rss()
  child.kill()
  await child.exited
  return { before, after, seconds }
}

const machine = await describeMachine('none')
console.log(`Machine: ${machine.cpu}, ${machine.cores} cores, ${machine.memory}, Bun ${machine.bun}`)
console.log(`10,000 anonymous POSTs of ${body.length} bytes over 500 namespaces\n`)
console.log('| Executable | RSS before | RSS after | Took |')
console.log('|---|---|---|---|')
for (const binary of binaries) {
  const { before, after, seconds } = await attack(binary)
  console.log(`| ${binary} | ${before.toFixed(0)} MB | ${after.toFixed(0)} MB | ${seconds.toFixed(1)} s |`)
}
