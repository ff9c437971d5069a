import { USERS_COMMANDS, type UsersCommand } from '../options.ts'
import { UsageError } from '../usage-error.ts'
import { type Environment, readCommandLine } from './command-line.ts'

export type { UsersCommand } from '../options.ts'

/** What `rock-legends users …` asks for, validated. */
export interface UsersConfig {
  command: UsersCommand
  /** The account's email: `--email` of `add`, the argument of the others. */
  email?: string
  /** The new account's name (`add --name`). */
  name?: string
  /** Read the password from standard input (`--password-stdin`) rather than generate one. */
  passwordStdin: boolean
  /** One JSON document on stdout instead of aligned text. */
  json: boolean
  /** `list`: one page (`--limit`, `--offset`) rather than every account. */
  page?: { limit: number; offset: number }
  /** The data file or `postgres://` URL (`--data`, `ROCK_LEGENDS_DATA`). */
  data: string
  /** A running server to go through (`--url`, `ROCK_LEGENDS_URL`), whatever `data` says. */
  url?: string
  /** The service key given with `--api-key`, wins over the lock's key. */
  apiKey?: string
  /** The first of `ROCK_LEGENDS_API_KEYS`, the fallback when neither `--api-key` nor a lock gives one. */
  envApiKey?: string
}

/** The text of `rock-legends users --help`. */
export const USERS_USAGE = `Usage: rock-legends users list [--limit N] [--offset N]
       rock-legends users add --email EMAIL --name NAME [--password-stdin]
       rock-legends users disable EMAIL
       rock-legends users enable EMAIL
       rock-legends users reset-password EMAIL [--password-stdin]
  each also takes [--data FILE|postgres://…] [--url URL] [--api-key KEY] [--json]

Manages the accounts of a data store, whether its server is stopped or running.

  list            every account (or one page of them): id, name, email, created, disabled
  add             a new account, with the sign-up rules; works with --no-signup servers too
  disable         the account cannot log in (with the right password it is told it is disabled: 403), and its
                  bearer tokens and personal API keys are refused from the next request on; nothing is deleted
  enable          undoes disable: logins work again, and so do its tokens and keys that have not expired
  reset-password  sets a new password and revokes the account's live bearer tokens (whoever is logged in must
                  log in again); its personal API keys keep working (disable the account to stop those)
  disable and enable are idempotent: an account already in that state is left as it is (exit 0, and it says so).

Passwords are never taken from the command line (other users of the machine can read it). Without
--password-stdin a strong password is generated and printed once; with it, the password is read from standard
input (one trailing newline is dropped), e.g.  read -rs P && printf %s "$P" | rock-legends users add … --password-stdin

Which way the command goes, and why:
  --url URL       through the server at URL (its operator routes /__admin/users), with a service key of that
                  server: --api-key KEY, or the first of ROCK_LEGENDS_API_KEYS. Also ROCK_LEGENDS_URL.
  a data file     (--data FILE, ROCK_LEGENDS_DATA, default ./data/db.json) that a running server owns (it holds
                  the lock of FILE.lock, as the kernel tells; a lock file left by a dead server counts for nothing,
                  whatever it says): the command never writes the file behind the server's back,
                  so it goes through that server, at the address the server recorded in the lock, with the
                  service key of its own it recorded there (readable only by the user the server runs as; run the
                  command as that user, or give --url and --api-key). A server started with --read-only
                  refuses the changes.
  a data file     that no server owns: the command opens it itself, holding its lock for the moment it works (a
                  server started in that moment refuses, as for any process that owns the file).
  postgres://…    the database itself, directly: every replica sees the change at its next request.
  :memory:        has no stored accounts to manage (they live and die in the server's memory): use --url.

Exit codes: 0 done (or nothing to do), 1 refused (an unknown or taken email, a server that cannot be reached or
refuses the key), 2 a usage error or a data file that cannot be used.
`

const isCommand = (word: string): word is UsersCommand => (USERS_COMMANDS as readonly string[]).includes(word)

/** Reads `users …` (the words after `users`) and the environment; `help` for `--help` or no command. */
export function parseUsersArgs(
  argv: readonly string[],
  env: Environment,
): { action: 'users'; config: UsersConfig } | { action: 'users-help' } {
  const [command, ...rest] = argv
  if (command === undefined || command === '--help' || command === '-h' || command === 'help')
    return { action: 'users-help' }
  if (!isCommand(command))
    throw new UsageError(`users has no command "${command}": list, add, disable, enable or reset-password`)
  const line = readCommandLine(`users ${command}`, rest, env, (flag) =>
    flag === '--password'
      ? 'a password is never taken from the command line (others can read it): use --password-stdin'
      : `users ${command} takes no ${flag}`,
  )
  if (line.flagged('help')) return { action: 'users-help' }
  const wantsEmail = command === 'disable' || command === 'enable' || command === 'reset-password'
  const words = line.words
  if (words.length > (wantsEmail ? 1 : 0))
    throw new UsageError(`unexpected argument "${words.at(wantsEmail ? 1 : 0)}" for users ${command}`)
  const email = wantsEmail ? words[0] : line.value('email')
  if ((wantsEmail || command === 'add') && !email?.trim())
    throw new UsageError(
      command === 'add' ? 'users add needs --email EMAIL and --name NAME' : `users ${command} needs the EMAIL`,
    )
  const name = line.value('name')
  if (command === 'add' && name === undefined) throw new UsageError('users add needs --name NAME')
  const paged = line.flagged('limit') || line.flagged('offset')
  return {
    action: 'users',
    config: {
      command,
      email: email?.trim(),
      name,
      passwordStdin: line.value('passwordStdin') ?? false,
      json: line.value('json') ?? false,
      page: paged ? { limit: line.value('limit') ?? 100, offset: line.value('offset') ?? 0 } : undefined,
      data: line.value('data') ?? '',
      url: line.value('url'),
      apiKey: line.flagValue('apiKeys')?.at(-1)?.trim(),
      envApiKey: line.envValue('apiKeys')?.[0],
    },
  }
}
