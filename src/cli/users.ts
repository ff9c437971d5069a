import { existsSync } from 'node:fs'
import { resolve } from 'node:path'
import { printErrorLine, printLine } from '../log.ts'
import { ConflictError, InvalidFieldError, NotFoundError } from '../model/errors.ts'
import { type AccountView, checkNewAccount, checkPassword, OperatorAccounts } from '../ops/accounts.ts'
import { RefusedError } from '../ops/refused-error.ts'
import { DataFileError, DataFileLockedError } from '../store/json-file/errors.ts'
import { type LockOwner, lockOwner } from '../store/json-file/lock.ts'
import { IN_MEMORY, isDatabaseUrl } from '../store/open-store.ts'
import { StoreUnavailableError } from '../store/store.ts'
import { printable, printableJson, printableMessage } from '../text/printable.ts'
import { UsageError } from '../usage-error.ts'
import { OperatorClient } from './operator-client.ts'
import type { UsersConfig } from './users-args.ts'

/** What the command does to accounts: `OperatorAccounts` over a store it opened, or the running server's routes. */
type Accounts = Pick<OperatorAccounts, 'list' | 'add' | 'setDisabled' | 'resetPassword'>

/** Where the command's changes go, said to a person on stderr; and what to release afterwards. */
interface Target {
  accounts: Accounts
  via: string
  close(): Promise<void>
}

/** How the command talks to the world; tests of the formatting may pass their own. */
export interface UsersIo {
  readStdin(): Promise<string>
  stdinIsTerminal: boolean
  out(text: string): void
  note(text: string): void
}

const processIo: UsersIo = {
  readStdin: () => Bun.stdin.text(),
  stdinIsTerminal: process.stdin.isTTY === true,
  out: printLine,
  note: printErrorLine,
}

const ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz'
/** How long to wait for a server that holds the lock to record its address (it does so once it listens). */
const ANNOUNCE_WAIT_MS = 3000

/** A password of 24 letters and digits from the CSPRNG (about 142 bits), without modulo bias. */
export function generatePassword(length = 24): string {
  let password = ''
  while (password.length < length)
    for (const byte of crypto.getRandomValues(new Uint8Array(length * 2)))
      if (byte < 248 && password.length < length) password += ALPHABET[byte % 62]
  return password
}

/** The password of `add` and `reset-password`: from standard input, or generated (and then shown once). */
async function password(config: UsersConfig, io: UsersIo): Promise<{ password: string; generated: boolean }> {
  if (!config.passwordStdin) return { password: generatePassword(), generated: true }
  if (io.stdinIsTerminal)
    throw new UsageError(
      '--password-stdin reads a pipe, not a terminal (the password would show as typed): read -rs P && printf %s "$P" | rock-legends users …',
    )
  const text = (await io.readStdin()).replace(/\r?\n$/, '')
  return { password: text, generated: false }
}

/**
 * The process that holds the lock of `file` (the kernel says whether one does, never a pid), or undefined when none
 * does; waits a moment for one that is still starting to record its address. What the lock's text says (pid, address,
 * key) is only taken once it names a process running here: until then it may be a dead process's, left by a crash.
 */
async function owningServer(file: string): Promise<LockOwner | undefined> {
  const deadline = Date.now() + ANNOUNCE_WAIT_MS
  for (;;) {
    const owner = lockOwner(file)
    if (!owner) return undefined
    if ((owner.running && owner.url) || Date.now() > deadline) return owner
    await Bun.sleep(100)
  }
}

/** Goes through the server at `url` with `key`, or says how to give one. */
function throughServer(url: string, key: string | undefined, why: string): Target {
  if (!key)
    throw new UsageError(
      `going through the server at ${url} needs one of its service keys: --api-key KEY or ROCK_LEGENDS_API_KEYS`,
    )
  return { accounts: new OperatorClient(url, key), via: `through the server at ${url}${why}`, close: async () => {} }
}

/** Decides which way the command goes (see `rock-legends users --help`); undefined: there is no store at all yet. */
async function openTarget(config: UsersConfig): Promise<Target | undefined> {
  if (config.url) return throughServer(config.url, config.apiKey ?? config.envApiKey, '')
  if (config.data === IN_MEMORY)
    throw new UsageError(
      '--data :memory: holds no stored accounts (they live and die in a server’s memory): use --url and --api-key to manage those of a running server',
    )
  if (isDatabaseUrl(config.data)) {
    const [{ openSqlStore }, { describeTarget }] = await Promise.all([
      import('../store/sql/sql-store.ts'),
      import('../store/sql/connect.ts'),
    ])
    const store = await openSqlStore(config.data, { pool: 2 })
    return {
      accounts: new OperatorAccounts(store),
      via: `in the database at ${describeTarget(config.data)}, directly (replicas see it at their next request)`,
      close: () => store.close(),
    }
  }
  const file = resolve(config.data)
  for (let attempt = 0; ; attempt++) {
    const owner = await owningServer(file)
    if (owner) {
      if (!owner.running)
        throw new RefusedError(
          `${config.data} is locked by a running process, but ${config.data}.lock names ${owner.pid === undefined ? 'none' : `pid ${owner.pid}, which is not a process running here`} (a server in another container, or one still starting): the command neither writes a file another process owns nor sends anything to an address it cannot trust; give --url and --api-key to go through that server`,
        )
      if (!owner.url)
        throw new RefusedError(
          `${config.data} is in use by process ${owner.pid}, which did not record its address in ${config.data}.lock (a server older than this command, or not a server): the command does not write a file another process owns; give --url and --api-key to go through that server`,
        )
      // The lock's key only goes to the address the lock names.
      return throughServer(owner.url, config.apiKey ?? owner.key, `, which owns ${config.data} (pid ${owner.pid})`)
    }
    if (!existsSync(file) && config.command !== 'add') return undefined
    if (!existsSync(file)) {
      // `add` makes the data file before a first start; where one was lost, it must not (nor drop its lock).
      const { lostDataFileProblem } = await import('../ops/lost-data-file.ts')
      const lost = lostDataFileProblem(file)
      if (lost) throw new RefusedError(lost)
    }
    const { openJsonFileStore } = await import('../store/json-file/json-file.ts')
    try {
      const store = await openJsonFileStore(file)
      return {
        accounts: new OperatorAccounts(store),
        via: `in ${config.data} (no server owns it)`,
        close: () => store.close(),
      }
    } catch (error) {
      // A server took the file between the look at its lock and the open: go through it instead.
      if (!(error instanceof DataFileLockedError) || attempt > 0) throw error
    }
  }
}

const pad = (rows: string[][]) => {
  const widths = rows[0]?.map((_, column) => Math.max(...rows.map((row) => (row[column] ?? '').length))) ?? []
  return rows.map((row) =>
    row
      .map((cell, column) => cell.padEnd(widths[column] ?? 0))
      .join('  ')
      .trimEnd(),
  )
}

// What users gave (a name at sign-up above all) may hold control characters: shown escaped, never acted on by the
// terminal (an ESC sequence would clear lines, forge rows or set the window title).
const who = (user: AccountView) => `${printable(user.email)} (account ${user.id}, ${printable(user.name)})`
/** The JSON outcome, with the characters JSON.stringify leaves raw but a terminal acts on escaped too. */
const json = (value: unknown) => printableJson(JSON.stringify(value))

/** Runs the command on its target and prints its outcome; throws the refusals. */
async function run(config: UsersConfig, io: UsersIo): Promise<void> {
  const { command } = config
  const secret = command === 'add' || command === 'reset-password' ? await password(config, io) : undefined
  // The rules are checked before anything is opened: a bad value costs no lock and no round trip.
  if (command === 'add')
    checkNewAccount({ name: config.name ?? '', email: config.email ?? '', password: secret?.password ?? '' })
  if (secret && command === 'reset-password') checkPassword(secret.password)
  const target = await openTarget(config)
  if (!target) {
    if (command !== 'list')
      throw new NotFoundError(`There is no account with the email ${config.email}: ${config.data} does not exist yet.`)
    return io.out(config.json ? json({ data: [], total: 0 }) : `no accounts (${config.data} does not exist yet)`)
  }
  try {
    if (!config.json) io.note(`rock-legends users: ${command} ${printableMessage(target.via)}`)
    const email = config.email ?? ''
    if (command === 'list') {
      const { items, total } = await listAll(target.accounts, config.page)
      if (config.json) return io.out(json({ data: items, total }))
      if (total === 0) return io.out('no accounts')
      const rows = items.map((u) => [String(u.id), u.name, u.email, u.created_at, u.disabled_at ?? '-'].map(printable))
      io.out(pad([['ID', 'NAME', 'EMAIL', 'CREATED', 'DISABLED'], ...rows]).join('\n'))
      if (items.length < total) io.out(`(${items.length} of ${total} accounts)`)
      return
    }
    if (command === 'add') {
      const user = await target.accounts.add({ name: config.name ?? '', email, password: secret?.password ?? '' })
      if (config.json) return io.out(json(secret?.generated ? { user, password: secret.password } : { user }))
      io.out(`added ${who(user)}`)
      if (secret?.generated) printPassword(io, secret.password)
      return
    }
    if (command === 'disable' || command === 'enable') {
      const outcome = await target.accounts.setDisabled(email, command === 'disable')
      if (config.json) return io.out(json(outcome))
      const { user, changed } = outcome
      if (!changed)
        return io.out(
          `${who(user)} was already ${command}d${user.disabled_at ? ` (since ${user.disabled_at})` : ''}: nothing changed`,
        )
      return io.out(
        command === 'disable'
          ? `disabled ${who(user)}: it cannot log in, and its bearer tokens and personal API keys are refused from now on`
          : `enabled ${who(user)}: it can log in again, and its tokens and keys that have not expired work again`,
      )
    }
    const outcome = await target.accounts.resetPassword(email, secret?.password ?? '')
    if (config.json) return io.out(json(secret?.generated ? { ...outcome, password: secret.password } : outcome))
    const tokens = outcome.revoked_tokens
    io.out(
      `new password for ${who(outcome.user)}; revoked its ${tokens} live bearer token${tokens === 1 ? '' : 's'} (whoever was logged in must log in again); its personal API keys still work`,
    )
    if (secret?.generated) printPassword(io, secret.password)
  } finally {
    await target.close()
  }
}

function printPassword(io: UsersIo, text: string): void {
  io.out(`password: ${text}`)
  io.out('(generated, and shown only now: give it to the account’s owner; only its argon2id hash is kept)')
}

/** One page, or every account a page of 100 at a time. */
async function listAll(accounts: Accounts, page: UsersConfig['page']) {
  if (page) return accounts.list(page)
  const items: AccountView[] = []
  for (;;) {
    const slice = await accounts.list({ limit: 100, offset: items.length })
    items.push(...slice.items)
    if (slice.items.length === 0 || items.length >= slice.total) return { items, total: slice.total }
  }
}

/**
 * `rock-legends users …`: runs the command, prints its outcome on stdout and any refusal as one line on stderr, and
 * resolves with the exit code: 0 done, 1 refused, 2 a usage error or a data file that cannot be used.
 */
export async function usersCommand(config: UsersConfig, io: UsersIo = processIo): Promise<number> {
  try {
    await run(config, io)
    return 0
  } catch (error) {
    // One line, whatever it quotes: an email given, or the answer of a server.
    const message = printableMessage((error as Error).message)
    io.note(
      `rock-legends users: ${error instanceof InvalidFieldError && error.pointer ? `${error.pointer.slice(1)}: ` : ''}${message}`,
    )
    if (error instanceof UsageError || error instanceof InvalidFieldError || error instanceof DataFileError) return 2
    if (
      error instanceof NotFoundError ||
      error instanceof ConflictError ||
      error instanceof RefusedError ||
      error instanceof DataFileLockedError ||
      error instanceof StoreUnavailableError
    )
      return 1
    throw error
  }
}
