/**
 * The seam's quick hash names the pages' assets and tags the covers: on Node (src/runtime/node.ts) it must give what
 * Bun's `Bun.hash` gives, or a cover's `ETag` and an asset's name would depend on the runtime the service runs on.
 */
import { expect, test } from 'bun:test'
import { quickHash as onBun } from '../../src/runtime/bun.ts'
import { quickHash as onNode } from '../../src/runtime/node.ts'
import { wyhash } from '../../src/runtime/wyhash.ts'

test("wyhash gives the reference vectors' values (seed 0) and Bun.hash's", () => {
  expect(wyhash(new Uint8Array()).toString(16)).toBe('409638ee2bde459')
  expect(BigInt(Bun.hash(''))).toBe(0x409638ee2bde459n)
})

test('on Node as on Bun, for every length class and for text beyond ASCII', () => {
  const alphabet = Array.from('abcXYZ019 <>"/\néñü—€😀')
  let seed = 7
  const random = () => {
    seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31
    return seed / 2 ** 31
  }
  const texts = ['', 'a', 'ab', 'abc', 'García', 'Serú Girán']
  for (let length = 0; length < 200; length++) texts.push(Array.from({ length }, (_, i) => alphabet[i % 11]).join(''))
  for (let n = 0; n < 300; n++)
    texts.push(
      Array.from({ length: Math.floor(random() * 3000) }, () => alphabet[Math.floor(random() * alphabet.length)]).join(
        '',
      ),
    )
  const differing = texts.filter((text) => onNode(text) !== onBun(text))
  expect(differing).toEqual([])
})
