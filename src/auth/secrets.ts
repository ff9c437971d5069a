import { createHash, timingSafeEqual } from 'node:crypto'
import { customAlphabet } from 'nanoid'

const ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz'
// 32 characters of a 62-letter alphabet: 190 bits from the CSPRNG, well over the 128 DESIGN.md asks for.
const randomPart = customAlphabet(ALPHABET, 32)

/** The prefixes that make a leaked secret recognisable (and greppable by secret scanners). */
export const TOKEN_PREFIX = 'rl_tok_'
export const KEY_PREFIX = 'rl_key_'

/** A new secret with a recognisable prefix, e.g. `rl_key_4fZ…`. Shown once; only its hash is stored. */
export const generateSecret = (prefix: string) => `${prefix}${randomPart()}`

/** The SHA-256 hash of a secret, hex-encoded: what the store keeps instead of the secret. */
export const hashSecret = (secret: string) => createHash('sha256').update(secret).digest('hex')

/** Compares two hex hashes in time that does not depend on where they differ. */
export function sameHash(a: string, b: string): boolean {
  const left = Buffer.from(a, 'hex')
  const right = Buffer.from(b, 'hex')
  return left.length === right.length && timingSafeEqual(left, right)
}
