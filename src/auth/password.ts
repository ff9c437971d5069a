import { randomUUID } from 'node:crypto'
import { ARGON2ID_COST, passwordHashProblem } from '../model/password-hash.ts'

/** Hashes and verifies passwords; the accounts service takes one so tests can watch it work. */
export interface PasswordHasher {
  /** The PHC string (`$argon2id$v=19$m=…`) of a new salted hash of `password`. */
  hash(password: string): Promise<string>
  /** Whether `password` matches `hashed`; as slow for a wrong password as for the right one. */
  verify(hashed: string, password: string): Promise<boolean>
}

// argon2id at the cost of src/model/password-hash.ts, about 20–50 ms per hash on a server core. `algorithm: 2` is
// Argon2id: the package declares it as a const enum, which isolated modules cannot read.
const OPTIONS = { algorithm: 2, ...ARGON2ID_COST } as const

// The native addon is loaded on first use: loading it costs milliseconds of start-up that a server which never sees
// a password (a read-only fixture, a test of the catalogue) would pay for nothing.
let addon: Promise<typeof import('@node-rs/argon2')> | undefined
const argon2 = () => {
  addon ??= import('@node-rs/argon2')
  return addon
}

/** The argon2id hasher, through the @node-rs/argon2 native addon (which `bun build --compile` embeds). */
export const argon2id: PasswordHasher = {
  hash: async (password) => (await argon2()).hash(password, OPTIONS),
  // A hash that costs more than a login may spend is never verified: its parameters are what verifying it costs.
  verify: async (hashed, password) =>
    passwordHashProblem(hashed) === undefined && (await argon2()).verify(hashed, password),
}

/**
 * argon2id at its lowest cost (8 KiB, one pass, one lane): a real PHC string that verifies like any other, in
 * microseconds instead of tens of milliseconds. Only for tests that sign up and log in hundreds of times and test what
 * the routes answer rather than what a hash costs (the in-process service's `passwords: 'fast-for-tests'`); never
 * the server's.
 */
export const lowestCostArgon2id: PasswordHasher = {
  hash: async (password) =>
    (await argon2()).hash(password, { algorithm: 2, memoryCost: 8, timeCost: 1, parallelism: 1 }),
  verify: async (hashed, password) =>
    passwordHashProblem(hashed) === undefined && (await argon2()).verify(hashed, password),
}

const dummies = new WeakMap<PasswordHasher, Promise<string>>()

/**
 * A hash of a random password no one knows, made once per hasher (on first use, so an app that never sees a login
 * pays nothing). Logins for unknown emails verify against it, so they cost the same argon2 work as a wrong password
 * for a real account: the response time does not tell which emails are registered.
 */
export function dummyHash(hasher: PasswordHasher): Promise<string> {
  let dummy = dummies.get(hasher)
  if (!dummy) {
    dummy = hasher.hash(randomUUID())
    dummies.set(hasher, dummy)
  }
  return dummy
}
