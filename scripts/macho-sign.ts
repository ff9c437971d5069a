import { createHash } from 'node:crypto'

const MH_MAGIC_64 = 0xfeedfacf
const LC_SEGMENT_64 = 0x19
const LC_CODE_SIGNATURE = 0x1d
const CSMAGIC_EMBEDDED_SIGNATURE = 0xfade0cc0
const CSMAGIC_CODEDIRECTORY = 0xfade0c02
const CS_SUPPORTSEXECSEG = 0x20400
const CS_ADHOC = 0x2
const CS_LINKER_SIGNED = 0x20000
const CS_HASHTYPE_SHA256 = 2
const CS_EXECSEG_MAIN_BINARY = 1
const PAGE_BITS = 12
const PAGE = 1 << PAGE_BITS
const HASH_SIZE = 32
const CODE_DIRECTORY_HEADER = 88
const SUPERBLOB_HEADER = 20

const roundUp = (value: number, unit: number) => Math.ceil(value / unit) * unit

/**
 * Replaces the code signature of a 64-bit Mach-O executable with an ad-hoc one over its final bytes: one SHA-256
 * CodeDirectory, flagged ad hoc and linker-signed, as `ld` and Bun's own signer write it. Bun 1.4.5 re-signs what
 * it cross-compiles for darwin-arm64 but leaves darwin-x64 with the runtime's original signature, which no longer
 * matches once the app is appended, so macOS would kill it at launch. The signature must be the last thing in the
 * file, inside `__LINKEDIT`, as in every Bun runtime; it is rewritten in place and may grow.
 *
 * @example
 * writeFileSync(file, adhocSign(readFileSync(file), 'rock-legends'))
 */
export function adhocSign(input: Uint8Array, identifier: string): Uint8Array {
  const view = new DataView(input.buffer, input.byteOffset, input.byteLength)
  if (view.getUint32(0, true) !== MH_MAGIC_64) throw new Error('not a 64-bit little-endian Mach-O file')
  let signatureCommand = -1
  let linkedit = -1
  let textSize = 0
  for (let i = 0, at = 32; i < view.getUint32(16, true); i++, at += view.getUint32(at + 4, true)) {
    const command = view.getUint32(at, true)
    if (command === LC_CODE_SIGNATURE) signatureCommand = at
    if (command !== LC_SEGMENT_64) continue
    const name = new TextDecoder().decode(input.subarray(at + 8, at + 24)).replace(/\0+$/, '')
    if (name === '__LINKEDIT') linkedit = at
    if (name === '__TEXT') textSize = Number(view.getBigUint64(at + 48, true))
  }
  if (signatureCommand < 0 || linkedit < 0) throw new Error('no LC_CODE_SIGNATURE or __LINKEDIT to sign into')
  const codeLimit = view.getUint32(signatureCommand + 8, true)
  const linkeditOffset = Number(view.getBigUint64(linkedit + 40, true))
  const slots = Math.ceil(codeLimit / PAGE)
  const ident = new TextEncoder().encode(`${identifier}\0`)
  const hashOffset = CODE_DIRECTORY_HEADER + ident.byteLength
  const directoryLength = hashOffset + slots * HASH_SIZE
  const signatureLength = SUPERBLOB_HEADER + directoryLength

  const output = new Uint8Array(codeLimit + signatureLength)
  output.set(input.subarray(0, codeLimit))
  const out = new DataView(output.buffer)
  // The load commands are part of the first page, so they are updated before anything is hashed.
  out.setUint32(signatureCommand + 12, signatureLength, true)
  const linkeditSize = codeLimit + signatureLength - linkeditOffset
  out.setBigUint64(linkedit + 48, BigInt(linkeditSize), true)
  out.setBigUint64(linkedit + 32, BigInt(roundUp(linkeditSize, PAGE)), true)

  let at = codeLimit
  out.setUint32(at, CSMAGIC_EMBEDDED_SIGNATURE)
  out.setUint32(at + 4, signatureLength)
  out.setUint32(at + 8, 1)
  out.setUint32(at + 12, 0) // CSSLOT_CODEDIRECTORY
  out.setUint32(at + 16, SUPERBLOB_HEADER)
  at += SUPERBLOB_HEADER
  const fields: [number, number][] = [
    [0, CSMAGIC_CODEDIRECTORY],
    [4, directoryLength],
    [8, CS_SUPPORTSEXECSEG],
    [12, CS_ADHOC | CS_LINKER_SIGNED],
    [16, hashOffset],
    [20, CODE_DIRECTORY_HEADER],
    [24, 0], // special slots
    [28, slots],
    [32, codeLimit],
  ]
  for (const [offset, value] of fields) out.setUint32(at + offset, value)
  out.setUint8(at + 36, HASH_SIZE)
  out.setUint8(at + 37, CS_HASHTYPE_SHA256)
  out.setUint8(at + 39, PAGE_BITS)
  // Scatter, team, 64-bit limit: zero. The executable segment is __TEXT, from offset 0.
  out.setBigUint64(at + 72, BigInt(textSize))
  out.setBigUint64(at + 80, BigInt(CS_EXECSEG_MAIN_BINARY))
  output.set(ident, at + CODE_DIRECTORY_HEADER)
  for (let slot = 0; slot < slots; slot++) {
    // The last page is hashed as it is, without padding, as the kernel and codesign(1) hash it.
    const page = output.subarray(slot * PAGE, Math.min((slot + 1) * PAGE, codeLimit))
    output.set(createHash('sha256').update(page).digest(), at + hashOffset + slot * HASH_SIZE)
  }
  return output
}
