import { timingSafeEqual } from 'node:crypto'
import { sha256 } from '#runtime'

const ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz'

/** The prefixes that make a leaked secret recognisable (and greppable by secret scanners). */
export const TOKEN_PREFIX = 'rl_tok_'
export const KEY_PREFIX = 'rl_key_'
/** The prefix of the service key a server makes for its own operator (`rock-legends users` through it). */
export const OPERATOR_PREFIX = 'rl_op_'

/**
 * The shapes of the secrets this server makes: bearer tokens and personal keys (32 of 62 letters, 190 bits) and its
 * operator key (43 base64url letters, 256 bits), all from the CSPRNG. None can be guessed at any rate.
 */
const OWN_SECRET = /^(?:rl_(?:tok|key)_[0-9A-Za-z]{32}|rl_op_[0-9A-Za-z_-]{43})$/

/** Whether `secret` has the shape of a secret this server makes: one nobody can guess, however many tries. */
export const isOwnSecretShape = (secret: string) => OWN_SECRET.test(secret)

// nanoid's Node entry loads `node:crypto`, about 2 ms of start-up (bench/startup.ts); a secret is only made after a
// login or for a new key, so nanoid is loaded then, once.
let randomPart: Promise<() => string> | undefined

/** A new secret with a recognisable prefix, e.g. `rl_key_4fZ…`. Shown once; only its hash is stored. */
export async function generateSecret(prefix: string): Promise<string> {
  // 32 characters of a 62-letter alphabet: 190 bits from the CSPRNG, well over the 128 DESIGN.md asks for.
  randomPart ??= import('nanoid').then(({ customAlphabet }) => customAlphabet(ALPHABET, 32))
  return `${prefix}${(await randomPart)()}`
}

/** The SHA-256 hash of a secret, hex-encoded: what the store keeps instead of the secret. */
export const hashSecret = (secret: string) => sha256(secret, 'hex')

/** Compares two hex hashes in time that does not depend on where they differ. */
export function sameHash(a: string, b: string): boolean {
  const left = Buffer.from(a, 'hex')
  const right = Buffer.from(b, 'hex')
  return left.length === right.length && timingSafeEqual(left, right)
}
