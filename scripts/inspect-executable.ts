import { createHash } from 'node:crypto'

/** What an executable's headers say about it. */
export interface ExecutableInfo {
  format: 'elf' | 'macho' | 'pe' | 'unknown'
  arch: 'x64' | 'arm64' | 'unknown'
  /**
   * Mach-O only: whether it carries a code signature whose page hashes match its bytes. Apple Silicon refuses to
   * run an arm64 executable without a valid one, and a runtime changed after signing (the app appended) would fail.
   */
  signature?: 'valid' | 'missing' | 'invalid'
}

const ARCHES: Record<string, Record<number, 'x64' | 'arm64'>> = {
  elf: { 62: 'x64', 183: 'arm64' },
  macho: { 16777223: 'x64', 16777228: 'arm64' },
  pe: { 34404: 'x64', 43620: 'arm64' },
}

const LC_CODE_SIGNATURE = 0x1d
const CS_SUPERBLOB = 0xfade0cc0
const CS_CODEDIRECTORY = 0xfade0c02
const HASH_ALGORITHMS: Record<number, string> = { 1: 'sha1', 2: 'sha256' }

/** Checks an ad-hoc or real Mach-O code signature: every code page must hash to what its CodeDirectory lists. */
function machoSignature(bytes: Uint8Array, view: DataView): 'valid' | 'missing' | 'invalid' {
  const commands = view.getUint32(16, true)
  let at = 32
  for (let i = 0; i < commands; i++) {
    if (view.getUint32(at, true) === LC_CODE_SIGNATURE) {
      const blob = view.getUint32(at + 8, true)
      if (view.getUint32(blob) !== CS_SUPERBLOB) return 'invalid'
      for (let entry = 0; entry < view.getUint32(blob + 8); entry++) {
        const directory = blob + view.getUint32(blob + 12 + entry * 8 + 4)
        if (view.getUint32(directory) !== CS_CODEDIRECTORY) continue
        const hashOffset = view.getUint32(directory + 16)
        const codeSlots = view.getUint32(directory + 28)
        const codeLimit = view.getUint32(directory + 32)
        const hashSize = view.getUint8(directory + 36)
        const algorithm = HASH_ALGORITHMS[view.getUint8(directory + 37)]
        const pageSize = 2 ** view.getUint8(directory + 39)
        if (!algorithm || codeSlots !== Math.ceil(codeLimit / pageSize)) return 'invalid'
        for (let slot = 0; slot < codeSlots; slot++) {
          const page = bytes.subarray(slot * pageSize, Math.min((slot + 1) * pageSize, codeLimit))
          const expected = bytes.subarray(
            directory + hashOffset + slot * hashSize,
            directory + hashOffset + (slot + 1) * hashSize,
          )
          if (!createHash(algorithm).update(page).digest().equals(expected)) return 'invalid'
        }
        return 'valid'
      }
      return 'invalid'
    }
    at += view.getUint32(at + 4, true)
  }
  return 'missing'
}

/**
 * Reads the container format and CPU of an executable (ELF, 64-bit Mach-O or PE) from its headers and, for Mach-O,
 * checks its code signature: what the release build uses to prove a cross-compiled file is what it claims to be.
 *
 * @example
 * inspectExecutable(readFileSync('dist/rock-legends-darwin-arm64')) // { format: 'macho', arch: 'arm64', signature: 'valid' }
 */
export function inspectExecutable(bytes: Uint8Array): ExecutableInfo {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  const arch = (format: string, code: number) => ARCHES[format]?.[code] ?? 'unknown'
  if (bytes.byteLength < 64) return { format: 'unknown', arch: 'unknown' }
  if (view.getUint32(0) === 0x7f454c46) return { format: 'elf', arch: arch('elf', view.getUint16(18, true)) }
  if (view.getUint32(0, true) === 0xfeedfacf)
    return { format: 'macho', arch: arch('macho', view.getUint32(4, true)), signature: machoSignature(bytes, view) }
  if (view.getUint16(0, true) === 0x5a4d) {
    const pe = view.getUint32(0x3c, true)
    if (pe + 6 <= bytes.byteLength && view.getUint32(pe) === 0x50450000)
      return { format: 'pe', arch: arch('pe', view.getUint16(pe + 4, true)) }
  }
  return { format: 'unknown', arch: 'unknown' }
}
