/**
 * The one form of a stored password: an argon2id PHC string, at no more cost than this server spends making one. A
 * hash's parameters travel in it and are what verifying it costs, so a hash planted with `m=1048576` (1 GiB) would
 * make every login for its account, wrong passwords included, take seconds and a gigabyte: such a hash is refused in
 * a backup or data file, and never verified.
 */

/**
 * What this server's hashes cost: the first of OWASP's recommended argon2id configurations (Password Storage Cheat
 * Sheet), 19 MiB of memory (m=19456 KiB), 2 passes (t=2), 1 lane (p=1). A build that raises them raises the bound.
 */
export const ARGON2ID_COST = { memoryCost: 19_456, timeCost: 2, parallelism: 1 } as const

/** A PHC string of argon2id, as `Bun.password` and @node-rs/argon2 write it: version, parameters, salt, hash. */
const ARGON2ID = /^\$argon2id\$v=19\$m=(\d{1,10}),t=(\d{1,10}),p=(\d{1,10})\$[A-Za-z0-9+/]{11,}\$[A-Za-z0-9+/]{16,}$/

/** Why `hash` is not a password hash this server would verify, or `undefined` when it is one. */
export function passwordHashProblem(hash: string): string | undefined {
  const match = ARGON2ID.exec(hash)
  if (!match) return 'is not an argon2id PHC string'
  const [memory, time, lanes] = [match[1], match[2], match[3]].map(Number) as [number, number, number]
  const { memoryCost, timeCost, parallelism } = ARGON2ID_COST
  if (memory < 8 || memory > memoryCost || time < 1 || time > timeCost || lanes < 1 || lanes > parallelism)
    return `costs m=${memory},t=${time},p=${lanes}: more than this server's hashes (m=${memoryCost},t=${timeCost},p=${parallelism}) or less than argon2 allows, so verifying it is refused`
  return undefined
}
