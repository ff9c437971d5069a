import { lowestCostArgon2id } from '../../src/auth/password.ts'

/**
 * The in-process tests of the API, which sign up and log in hundreds of times and test what the routes answer rather
 * than what a hash costs, build their apps with argon2id at its lowest cost (`testApp()`, `createApp({ passwords })`).
 * The production parameters (m=19456, t=2, p=1) are checked where they matter: in-process by
 * test/accounts/storage.test.ts and login.test.ts, which ask for the default hasher, and in the compiled executable's
 * own data file by test/accounts/standalone.binary.test.ts.
 */
export const cheapPasswords = lowestCostArgon2id

/**
 * A stored password hash for data files and backups written by hand: the argon2id PHC string of `i-love-rock` at the
 * lowest cost, which a data file, a backup and `verify` accept (a made-up string such as `h` is refused there).
 */
export const STORED_HASH =
  '$argon2id$v=19$m=8,t=1,p=1$AAD5zJn2lG9UM52je2v90A$vgmcpjIiqCFnrFHZH4m/coxoKwJJACEjLVLVS1Lko0M'

/** A second such hash (of `another-password`), for a password that changes. */
export const OTHER_STORED_HASH =
  '$argon2id$v=19$m=8,t=1,p=1$GtL5SMcu+q3ttNY82rjFRg$8fAGxtrUqgq5lALoHjiH9BIevygj6lQnLo1WJXl5pAc'
