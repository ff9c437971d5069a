import { Type } from '@sinclair/typebox'
import { checkFoldedEmail, displayEmail } from '../accounts/service.ts'
import { argon2id, type PasswordHasher } from '../auth/password.ts'
import { ConflictError, NotFoundError } from '../model/errors.ts'
import { checkFields } from '../model/field-detail.ts'
import type { User } from '../model/user.ts'
import { SignupInput } from '../model/user.ts'
import { DuplicateEmailError, type Page, type Slice, type Store } from '../store/store.ts'

/** An account as the operator sees it (`rock-legends users`, `/__admin/users`): never the password or its hash. */
export interface AccountView {
  id: number
  name: string
  email: string
  created_at: string
  /** Left out while the account is enabled. */
  disabled_at?: string
}

/** What `disable` and `enable` answer: the account, and whether this call changed it (false: it already was). */
export interface AccountChange {
  user: AccountView
  changed: boolean
}

/** What `resetPassword` answers: the account, and how many of its live bearer tokens were revoked. */
export interface PasswordReset {
  user: AccountView
  revoked_tokens: number
}

/** The fields of a new account, as the operator gives them: those of a sign-up. */
export type NewAccount = SignupInput

/** The view of `user` the operator gets. */
export const accountView = ({ id, name, email, createdAt, disabledAt }: User): AccountView => ({
  id,
  name,
  email,
  created_at: createdAt,
  disabled_at: disabledAt ?? undefined,
})

/**
 * The sign-up body's schema and rules (`SignupInput`, and the folded form of the email, as `Accounts.signUp` checks
 * it), for callers that do not come through a validated route (the command line); refused as the API refuses them.
 */
export function checkNewAccount(fields: NewAccount): void {
  checkFields(SignupInput, fields)
  checkFoldedEmail(fields.email)
}

const PasswordInput = Type.Object({ password: SignupInput.properties.password })

/** The password rule of sign-up (`SignupInput`), for a new password the operator sets. */
export function checkPassword(password: string): void {
  checkFields(PasswordInput, { password })
}

const unknownAccount = (email: string) => new NotFoundError(`There is no account with the email ${email.trim()}.`)

/**
 * What the operator does to accounts, whichever way the command reaches the store (directly, or through the running
 * server's `/__admin/users` routes): list them, add one, disable and enable one, reset a password. Not limited by
 * `--no-signup` or by the login brakes: only the operator gets here.
 */
export class OperatorAccounts {
  /** The accounts of `store`, hashing with `passwords` (argon2id) and dating changes by `now`. */
  constructor(
    private readonly store: Store,
    private readonly now: () => Date = () => new Date(),
    private readonly passwords: PasswordHasher = argon2id,
  ) {}

  /** A page of every account, in id order. */
  async list(page: Page): Promise<Slice<AccountView>> {
    const { items, total } = await this.store.users.list(page)
    return { items: items.map(accountView), total }
  }

  /** Creates an account with the sign-up rules; 409 when the email, or a look-alike form of it, is taken. */
  async add(fields: NewAccount): Promise<AccountView> {
    checkNewAccount(fields)
    const email = displayEmail(fields.email)
    const taken = () => new ConflictError(`The email ${email} is already registered.`)
    if (await this.store.users.findByEmail(email)) throw taken()
    const passwordHash = await this.passwords.hash(fields.password)
    try {
      const user = await this.store.users.insert({
        name: fields.name.trim(),
        email,
        passwordHash,
        createdAt: this.now().toISOString(),
        disabledAt: null,
      })
      return accountView(user)
    } catch (error) {
      if (error instanceof DuplicateEmailError) throw taken()
      throw error
    }
  }

  /**
   * Disables (or enables) the account of `email`. Idempotent: an account already in that state is left as it is
   * (`changed: false`), and keeps the time it was first disabled. Disabling revokes nothing: the credential check
   * reads the account on every request, so its tokens and keys are refused from the next request on, and work again
   * (those not expired) once it is enabled. A credential is stored only while its account is enabled, checked in
   * the write that stores it, so a login whose password check was in flight gets 403 and no token.
   */
  async setDisabled(email: string, disabled: boolean): Promise<AccountChange> {
    const user = await this.find(email)
    if ((user.disabledAt !== null) === disabled) return { user: accountView(user), changed: false }
    const updated = await this.store.users.update(user.id, {
      disabledAt: disabled ? this.now().toISOString() : null,
    })
    if (!updated) throw unknownAccount(email)
    return { user: accountView(updated), changed: true }
  }

  /**
   * Sets a new password for the account of `email`, moves its credentials epoch on and revokes its live bearer
   * tokens, in one write: whoever logged in with the old password is logged out, and a login still checking the old
   * password gets no token (its insert carries the old epoch and is refused), nor can a token of the old epoch be
   * used. Personal API keys are left alone: the user made them for their tools, and lists and revokes them
   * (disabling the account refuses them too).
   */
  async resetPassword(email: string, password: string): Promise<PasswordReset> {
    checkPassword(password)
    const user = await this.find(email)
    const passwordHash = await this.passwords.hash(password)
    const changed = await this.store.users.startEpoch(user.id, { passwordHash }, this.now().toISOString())
    if (!changed) throw unknownAccount(email)
    return { user: accountView(changed.user), revoked_tokens: changed.revokedTokens }
  }

  private async find(email: string): Promise<User> {
    const user = await this.store.users.findByEmail(email)
    if (!user) throw unknownAccount(email)
    return user
  }
}
