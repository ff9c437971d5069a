/**
 * The one form of a stored password: an argon2id PHC string, at no more than a bounded cost. A hash's parameters
 * travel in it and are what verifying it costs, so a hash planted with `m=1048576` (1 GiB) would make every login
 * for its account, wrong passwords included, take seconds and a gigabyte: such a hash is refused in a backup or data
 * file, and never verified.
 */

/**
 * What this server's hashes cost: the first of OWASP's recommended argon2id configurations (Password Storage Cheat
 * Sheet), 19 MiB of memory (m=19456 KiB), 2 passes (t=2), 1 lane (p=1).
 */
export const ARGON2ID_COST = { memoryCost: 19_456, timeCost: 2, parallelism: 1 } as const

/**
 * The most a stored hash may cost: memory times passes at most twice this server's own, at most 46 MiB of memory (the
 * most OWASP recommends) and 4 lanes. Every configuration OWASP recommends fits, so a later build may move to another
 * without locking anyone out; a hash that costs more is refused.
 */
const MOST = { memoryTimesPasses: 2 * ARGON2ID_COST.memoryCost * ARGON2ID_COST.timeCost, memory: 47_104, lanes: 4 }

/** A PHC string of argon2id, as `Bun.password` and @node-rs/argon2 write it: version, parameters, salt, hash. */
const ARGON2ID = /^\$argon2id\$v=19\$m=(\d{1,10}),t=(\d{1,10}),p=(\d{1,10})\$[A-Za-z0-9+/]{11,}\$[A-Za-z0-9+/]{16,}$/

/** Why `hash` is not a password hash this server would verify, or `undefined` when it is one. */
export function passwordHashProblem(hash: string): string | undefined {
  const match = ARGON2ID.exec(hash)
  if (!match) return 'is not an argon2id PHC string'
  const [memory, time, lanes] = [match[1], match[2], match[3]].map(Number) as [number, number, number]
  if (memory < 8 * lanes || time < 1 || lanes < 1)
    return `has m=${memory},t=${time},p=${lanes}, which argon2 does not allow`
  if (memory * time > MOST.memoryTimesPasses || memory > MOST.memory || lanes > MOST.lanes)
    return `costs m=${memory},t=${time},p=${lanes}: more than a login may spend (memory × passes at most ${MOST.memoryTimesPasses}, memory at most ${MOST.memory} KiB, at most ${MOST.lanes} lanes), so verifying it is refused`
  return undefined
}
