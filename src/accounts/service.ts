import type { UserCaller } from '../auth/guard.ts'
import { argon2id, dummyHash, type PasswordHasher } from '../auth/password.ts'
import { generateSecret, hashSecret, KEY_PREFIX, TOKEN_PREFIX } from '../auth/secrets.ts'
import type { Credential } from '../model/credential.ts'
import { emailKey, isFoldedEmail } from '../model/email.ts'
import {
  AccountDisabledError,
  ConflictError,
  CredentialNotAllowedError,
  InvalidFieldError,
  NotFoundError,
  NotPermittedError,
  TooManyAttemptsError,
  UnauthenticatedError,
} from '../model/errors.ts'
import type { QuotaReport } from '../model/quota.ts'
import type { PublicUser, User } from '../model/user.ts'
import {
  AccountChangedError,
  type Attempt,
  type CredentialLimit,
  CredentialLimitError,
  DuplicateEmailError,
  type Limiter,
  type Page,
  type RateLimit,
  type Recents,
  type Slice,
  type Store,
} from '../store/store.ts'

/** How often each account operation may be tried before it is refused with 429. */
export interface AccountLimits {
  /** Failed logins per client address (see `clientKey`), whatever the email: slows guessing across many accounts. */
  loginFailuresPerClient: RateLimit
  /**
   * Failed logins per email from one client address: slows guessing one account's password, and refuses only that
   * address, so a guesser cannot lock the owner out from elsewhere.
   */
  loginFailuresPerEmail: RateLimit
  /**
   * Failed logins per email from all addresses together, much higher: bounds guessing one account from many
   * addresses. Addresses where the account logged in within `knownAddressMs` are not refused by it.
   */
  loginFailuresPerEmailCeiling: RateLimit
  /** How long a successful login keeps its address known to its account (exempt from the ceiling). */
  knownAddressMs: number
  /**
   * How many addresses each account keeps known, its latest: only its own logins replace them, never another
   * account's, so the memory they take is bounded per account.
   */
  knownAddressesPerAccount: number
  /**
   * Failed credential checks (`X-API-Key`, `Authorization: Bearer`) per client address; past it, that address's
   * credentials are not checked at all until the window lets it (see `authGuard`).
   */
  credentialFailuresPerClient: RateLimit
  /** Sign-ups (successful or not) per client address: each one costs an argon2 hash and a durable write. */
  signupsPerClient: RateLimit
}

const MINUTE = 60_000

/** The limits the server runs with; generous enough for a test suite that signs up a user per test. */
export const ACCOUNT_LIMITS: AccountLimits = {
  loginFailuresPerClient: { limit: 20, windowMs: 15 * MINUTE },
  loginFailuresPerEmail: { limit: 5, windowMs: 15 * MINUTE },
  loginFailuresPerEmailCeiling: { limit: 100, windowMs: 15 * MINUTE },
  knownAddressMs: 30 * 24 * 60 * MINUTE,
  knownAddressesPerAccount: 10,
  credentialFailuresPerClient: { limit: 100, windowMs: 10 * MINUTE },
  signupsPerClient: { limit: 20, windowMs: 10 * MINUTE },
}

/** How many credentials one account may hold at once; past that, dead ones are purged (see {@link PURGE_EVERY_MS}). */
export const CREDENTIAL_LIMITS = {
  /** Personal API keys not revoked: one more is refused (409) until the user revokes one. */
  keys: { max: 100, whenFull: 'refuse' },
  /**
   * Bearer tokens neither revoked nor expired: a login past it revokes the oldest, so a test suite that logs in for
   * every test keeps working, and its forgotten sessions end by themselves.
   */
  tokens: { max: 100, whenFull: 'revoke-oldest' },
} as const satisfies Record<string, CredentialLimit>

/** How often logins and new keys also purge every account's revoked and expired credentials from the store. */
export const PURGE_EVERY_MS = 60 * MINUTE

/** What the accounts service is built with. */
export interface AccountsOptions {
  now: () => Date
  /** Lifetime of bearer tokens in milliseconds (`--token-ttl`). */
  tokenTtlMs: number
  passwords?: PasswordHasher
  limits?: AccountLimits
  /** Whether anyone may create an account; `false` with `--no-signup`. */
  signup?: boolean
}

/** A signed-in session: the user and their new bearer token, shown only now. */
export interface Session {
  user: PublicUser
  token: string
  /** When the token stops working (ISO 8601). */
  expiresAt: string
}

/** A personal API key as the service hands one out: never its hash (the key itself is never kept). */
export interface PersonalKey {
  id: number
  name: string
  /** The first characters of the key, to recognise it. */
  prefix: string
  createdAt: string
  /** `null` until the key is first used. */
  lastUsedAt: string | null
}

// `rl_key_` or `rl_tok_` and four random characters: enough to tell keys apart in a list, too few to help a guesser.
const PREFIX_LENGTH = 11
// The latest instant a Date can hold, so that an absurd --token-ttl gives a token that never expires, not a crash.
const MAX_TIME = 8.64e15

/** The form an email is stored and shown in: as typed, trimmed and lower-cased. */
export const displayEmail = (email: string) => email.trim().toLowerCase()

/**
 * Refuses an email (as typed) whose folded form is no address: NFKC can turn one character into several, a dot among
 * them ("⒈" is "1."), and such an address could never be told apart from others.
 */
export function checkFoldedEmail(email: string): void {
  if (!isFoldedEmail(emailKey(email)))
    throw new InvalidFieldError('/email', 'must be an email address such as carlos@rock-legends.com')
}

const publicUser = ({ id, name, email }: User): PublicUser => ({ id, name, email })

const personalKey = ({ id, name, prefix, createdAt, lastUsedAt }: Credential): PersonalKey => ({
  id,
  name: name ?? '',
  prefix,
  createdAt,
  lastUsedAt,
})

const emailTaken = (email: string) =>
  new ConflictError(`The email ${email} is already registered. Log in with POST /api/v1/user/login.`)

// One answer for an unknown email and a wrong password, so the response says nothing about which emails exist.
const loginFailed = () => new UnauthenticatedError('The email or password is not correct.')

const accountDisabled = () =>
  new AccountDisabledError(
    "This account has been disabled by the server's operator: it cannot log in, and its tokens and keys are refused. Ask the operator to enable it again.",
  )

// What the credential check answers for a disabled account's credentials (src/auth/guard.ts).
const credentialsRefused = () => new UnauthenticatedError('The credentials are not valid: unknown, expired or revoked.')

const accountChanged = () =>
  new ConflictError(
    "Your account's password was reset while the key was being created: no key was made. Send the request again (a bearer token from before the reset must log in again first).",
  )

const unknownKey = (id: number) => new NotFoundError(`You have no API key ${id}.`)

const tooManyKeys = (max: number) =>
  new ConflictError(
    `You already have ${max} personal API keys, the most an account may hold. Revoke one you no longer use with DELETE /api/v1/user/api-keys/{id}, then create the new one.`,
  )

/**
 * Sign-up, login, logout and personal API keys. Refusals are domain errors ({@link ConflictError},
 * {@link UnauthenticatedError}, {@link TooManyAttemptsError}, {@link NotFoundError}…), which only `http/` turns into
 * problems.
 */
export class Accounts {
  private readonly now: () => Date
  private readonly tokenTtlMs: number
  private readonly passwords: PasswordHasher
  private readonly failuresByClient: Limiter
  private readonly failuresByEmailFromClient: Limiter
  private readonly failuresByEmailCeiling: Limiter
  private readonly knownAddresses: Recents
  private readonly signupsByClient: Limiter
  private readonly signupOpen: boolean
  private readonly limits: AccountLimits
  /** When (ms since the epoch, by `now`) the next purge of dead credentials is due; the first write does one. */
  private nextPurge = Number.NEGATIVE_INFINITY

  /** The accounts of `store`. */
  constructor(
    private readonly store: Store,
    { now, tokenTtlMs, passwords = argon2id, limits = ACCOUNT_LIMITS, signup = true }: AccountsOptions,
  ) {
    this.signupOpen = signup
    this.limits = limits
    this.now = now
    this.tokenTtlMs = tokenTtlMs
    this.passwords = passwords
    const clock = () => now().getTime()
    // The names are stable: over SQL they key the attempts that every replica shares.
    this.failuresByClient = store.limiter('login-failures-per-client', limits.loginFailuresPerClient, clock)
    this.failuresByEmailFromClient = store.limiter(
      'login-failures-per-email-from-client',
      limits.loginFailuresPerEmail,
      clock,
    )
    this.failuresByEmailCeiling = store.limiter('login-failures-per-email', limits.loginFailuresPerEmailCeiling, clock)
    // Kept per account (by email), at most `knownAddressesPerAccount` each: no one else's logins can push one out.
    this.knownAddresses = store.recents(
      'known-addresses',
      { perOwner: limits.knownAddressesPerAccount, windowMs: limits.knownAddressMs },
      clock,
    )
    this.signupsByClient = store.limiter('signups-per-client', limits.signupsPerClient, clock)
  }

  /** Refuses with {@link NotPermittedError} when sign-up is closed (`--no-signup`); the route asks before the body. */
  requireSignupOpen(): void {
    if (!this.signupOpen)
      throw new NotPermittedError(
        'Sign-up is closed on this server (--no-signup): accounts are created by its operator. Log in with an account you have.',
      )
  }

  /**
   * Registers a user; refused when the email or a look-alike form of it is taken (compared folded, see
   * {@link emailKey}), or after too many from `client`. The email is kept as typed, trimmed and lower-cased.
   */
  async signUp(
    fields: { name: string; email: string; password: string },
    client: string,
    report?: QuotaReport,
  ): Promise<PublicUser> {
    this.requireSignupOpen()
    await admit(
      [
        {
          limiter: this.signupsByClient,
          key: client,
          reason: 'Too many sign-ups from this address.',
          quota: { name: 'signups-per-client', ...this.limits.signupsPerClient },
        },
      ],
      report,
    )
    const email = displayEmail(fields.email)
    checkFoldedEmail(email)
    // Saves an argon2 hash on the obvious duplicate; the store's insert is what settles a race.
    if (await this.store.users.findByEmail(email)) throw emailTaken(email)
    const passwordHash = await this.passwords.hash(fields.password)
    try {
      const createdAt = this.now().toISOString()
      return publicUser(
        await this.store.users.insert({ name: fields.name.trim(), email, passwordHash, createdAt, disabledAt: null }),
      )
    } catch (error) {
      if (error instanceof DuplicateEmailError) throw emailTaken(email)
      throw error
    }
  }

  /** Checks the password and issues a bearer token; refused for a wrong email or password, and after repeated ones. */
  async logIn(fields: { email: string; password: string }, client: string): Promise<Session> {
    const email = emailKey(fields.email)
    // Keyed by email and address together: a guesser is refused at their own address, the owner elsewhere is not.
    const emailFromClient = `${email}\n${client}`
    // Past the ceiling only addresses the account logged in from lately may still try: many guessing addresses can
    // stop the guessing on an account, not its owner.
    const known = await this.knownAddresses.has(email, client)
    // Checked and counted in one step each, before the slow check, and forgiven on success, so parallel guesses (on
    // any replica) cannot all slip under the limit. Each attempt is its own, so a success takes back its own counts
    // only: failures in flight beside it still count.
    const [byClient, byEmailFromClient, byEmailCeiling] = await admit([
      {
        limiter: this.failuresByClient,
        key: client,
        reason: 'Too many failed logins from this address.',
        quota: { name: 'login-failures-per-client', ...this.limits.loginFailuresPerClient },
      },
      {
        limiter: this.failuresByEmailFromClient,
        key: emailFromClient,
        reason: 'Too many failed logins for this account from this address.',
        quota: { name: 'login-failures-per-email-from-client', ...this.limits.loginFailuresPerEmail },
      },
      {
        limiter: this.failuresByEmailCeiling,
        key: email,
        reason: 'Too many failed logins for this account.',
        quota: { name: 'login-failures-per-email', ...this.limits.loginFailuresPerEmailCeiling },
        exempt: known,
      },
    ])
    // Awaited on every login, known email or not, so that neither path does work the other does not.
    const dummy = await dummyHash(this.passwords)
    const user = await this.store.users.findByEmail(email)
    // An unknown email is verified against the dummy hash: the same argon2 work as a wrong password, so the time
    // taken does not reveal which emails are registered (an enumeration side channel).
    const valid = await this.passwords.verify(user?.passwordHash ?? dummy, fields.password)
    if (!user || !valid) {
      await Promise.all([
        this.failuresByClient.settle(byClient),
        this.failuresByEmailFromClient.settle(byEmailFromClient),
        // A known address was not counted before the check (see `admit`): its failure counts now.
        byEmailCeiling
          ? this.failuresByEmailCeiling.settle(byEmailCeiling)
          : this.failuresByEmailCeiling.record(email).then((attempt) => this.failuresByEmailCeiling.settle(attempt)),
      ])
      throw loginFailed()
    }
    await Promise.all([
      this.failuresByClient.forgive(byClient),
      this.failuresByEmailFromClient.forgive(byEmailFromClient),
      byEmailCeiling && this.failuresByEmailCeiling.forgive(byEmailCeiling),
    ])
    // Said only now, after the password was verified (the right one is not a failed login): whoever does not know
    // it learns nothing, and the owner learns why they cannot log in.
    if (user.disabledAt !== null) throw accountDisabled()
    const at = this.now()
    const token = await generateSecret(TOKEN_PREFIX)
    const expiresAt = new Date(Math.min(at.getTime() + this.tokenTtlMs, MAX_TIME)).toISOString()
    const purged = this.purgeIfDue(at)
    try {
      // Stored only if the account is still enabled and at the epoch read before the password check, in the same
      // write: a password reset or a disable that landed while argon2 ran leaves this login without a token. Past
      // the limit of live tokens, the oldest is revoked in that write too.
      await this.store.credentials.insert(
        {
          userId: user.id,
          kind: 'token',
          name: null,
          hash: hashSecret(token),
          prefix: token.slice(0, PREFIX_LENGTH),
          createdAt: at.toISOString(),
          expiresAt,
          lastUsedAt: null,
          revokedAt: null,
          epoch: user.credentialsEpoch,
        },
        CREDENTIAL_LIMITS.tokens,
      )
    } catch (error) {
      if (error instanceof AccountChangedError) throw await this.changedDuringLogin(user.id)
      throw error
    } finally {
      await purged
    }
    // The owner's earlier slips from this address are forgiven; failures from elsewhere, or still in flight, are not.
    await this.failuresByEmailFromClient.forgetSettled(emailFromClient)
    await this.knownAddresses.add(email, client)
    return { user: publicUser(user), token, expiresAt }
  }

  /**
   * What a login that lost a race gets: the answer it would have had, had it started after the change that beat it.
   * A disabled account gets 403 as for the right password; a password reset, 401 as for a wrong one (the password
   * verified is no longer the account's). The token was not stored, and the client logs in again.
   */
  private async changedDuringLogin(userId: number): Promise<Error> {
    const now = await this.store.users.get(userId)
    return now?.disabledAt ? accountDisabled() : loginFailed()
  }

  /** The user `userId`. */
  async getUser(userId: number): Promise<PublicUser> {
    const user = await this.store.users.get(userId)
    if (!user) throw new NotFoundError('Your account no longer exists.')
    return publicUser(user)
  }

  /** Revokes the bearer token the caller presented; a personal key is revoked by its own route, not by logout. */
  async logOut(caller: UserCaller): Promise<void> {
    if (caller.via !== 'token')
      throw new CredentialNotAllowedError(
        'Logout ends a bearer token session. To revoke a personal API key, use DELETE /api/v1/user/api-keys/{id}.',
      )
    await this.store.credentials.revoke(caller.credentialId, this.now().toISOString())
  }

  /**
   * Creates a personal API key for `userId`; the key is in the answer and nowhere else. Stored only if the account is
   * still enabled and at the epoch read here, in the same write: an account disabled meanwhile gets 401, as its
   * credentials would a moment later, and one whose password was reset meanwhile 409 (send it again).
   */
  async createKey(userId: number, name: string): Promise<PersonalKey & { key: string }> {
    const account = await this.store.users.get(userId)
    if (!account || account.disabledAt !== null) throw credentialsRefused()
    const key = await generateSecret(KEY_PREFIX)
    const at = this.now()
    const purged = this.purgeIfDue(at)
    try {
      const credential = await this.store.credentials.insert(
        {
          userId,
          kind: 'key',
          name: name.trim(),
          hash: hashSecret(key),
          prefix: key.slice(0, PREFIX_LENGTH),
          createdAt: at.toISOString(),
          expiresAt: null,
          lastUsedAt: null,
          revokedAt: null,
          epoch: account.credentialsEpoch,
        },
        CREDENTIAL_LIMITS.keys,
      )
      return { ...personalKey(credential), key }
    } catch (error) {
      if (error instanceof CredentialLimitError) throw tooManyKeys(error.max)
      if (error instanceof AccountChangedError) {
        const now = await this.store.users.get(userId)
        throw !now || now.disabledAt !== null ? credentialsRefused() : accountChanged()
      }
      throw error
    } finally {
      await purged
    }
  }

  /** One page of the personal API keys of `userId` that are not revoked, oldest first. */
  async listKeys(userId: number, page: Page): Promise<Slice<PersonalKey>> {
    const keys = await this.activeKeys(userId)
    return { items: keys.slice(page.offset, page.offset + page.limit).map(personalKey), total: keys.length }
  }

  /** Personal API key `id` of `userId`; another user's key, a revoked key or a token is not found. */
  async getKey(userId: number, id: number): Promise<PersonalKey> {
    const key = (await this.activeKeys(userId)).find((credential) => credential.id === id)
    if (!key) throw unknownKey(id)
    return personalKey(key)
  }

  /** Revokes personal API key `id` of `userId`; not found as for {@link getKey}. */
  async revokeKey(userId: number, id: number): Promise<void> {
    await this.getKey(userId, id)
    await this.store.credentials.revoke(id, this.now().toISOString())
  }

  /**
   * Purges every account's dead credentials when one is due, in the same group commit as the write that asked (no
   * write of its own). A failed purge loses nothing and is tried again at the next write.
   */
  private purgeIfDue(at: Date): Promise<unknown> {
    if (at.getTime() < this.nextPurge) return Promise.resolve()
    this.nextPurge = at.getTime() + PURGE_EVERY_MS
    return this.store.credentials.purge(at.toISOString()).catch(() => {
      this.nextPurge = Number.NEGATIVE_INFINITY
    })
  }

  private async activeKeys(userId: number): Promise<Credential[]> {
    return (await this.store.credentials.listByUser(userId)).filter(
      (credential) => credential.kind === 'key' && credential.revokedAt === null,
    )
  }
}

/**
 * One brake an operation passes: an attempt of `key` on `limiter`, refused with `reason` past its limit; `quota`
 * names the limiter and its rule, for the `RateLimit` headers of the answer.
 */
interface Brake {
  limiter: Limiter
  key: string
  reason: string
  quota: { name: string; limit: number; windowMs: number }
  /**
   * Never refused, and not counted before the check: the caller counts it (`record`) only if the operation fails. Were
   * it counted first and forgiven on success, a full window would have dropped its oldest real failure to make room,
   * and each exempt success would quietly take one failure back.
   */
  exempt?: boolean
}

/**
 * Counts one attempt on each brake, in order, each checked and counted in one step. The first brake at its limit
 * refuses with {@link TooManyAttemptsError}, after taking back the attempts already counted: a refused request counts
 * nothing.
 */
async function admit<const B extends readonly Brake[]>(
  brakes: B,
  report?: QuotaReport,
): Promise<{ [K in keyof B]: B[K] extends { exempt: boolean } ? Attempt | undefined : Attempt }> {
  const counted: (Attempt | undefined)[] = []
  for (const { limiter, key, reason, exempt, quota } of brakes) {
    if (exempt) {
      counted.push(undefined)
      continue
    }
    const hit = await limiter.hit(key)
    if (hit.attempt) {
      counted.push(hit.attempt)
      // What remains comes with the hit: the headers cost no second round-trip to the store.
      report?.({ policy: quota.name, limit: quota.limit, windowMs: quota.windowMs, remaining: hit.remaining })
      continue
    }
    const seconds = hit.retryAfter
    await Promise.all(counted.map((earlier, i) => earlier && brakes[i]?.limiter.forgive(earlier)))
    throw new TooManyAttemptsError(
      `${reason} Try again in ${seconds} second${seconds === 1 ? '' : 's'}.`,
      seconds,
      quota,
    )
  }
  return counted as { [K in keyof B]: B[K] extends { exempt: boolean } ? Attempt | undefined : Attempt }
}
