import type { StoreCommand } from '../options.ts'
import { IN_MEMORY } from '../store/open-store.ts'
import { UsageError } from '../usage-error.ts'
import { type Environment, readCommandLine } from './command-line.ts'

/** What `rock-legends verify|backup|restore|copy …` asks for, validated. */
export interface OpsConfig {
  command: StoreCommand
  /** The backup file: the one to check (`verify FILE`), write (`backup FILE`) or read (`restore FILE`). */
  file?: string
  /** The store: a data file or a `postgres://` URL (`--data`, `ROCK_LEGENDS_DATA`; `restore` needs `--data`). */
  data?: string
  /** `copy`: the store to copy (a data file or a `postgres://` URL), left as it is. */
  from?: string
  /** `copy`: the store to fill, a data file or a `postgres://` URL; empty or new unless `replace`. */
  to?: string
  /** `copy --replace`: a target that holds records is replaced (what it held is kept aside). */
  replace?: boolean
}

/** The text of `rock-legends verify|backup|restore|copy --help`. */
export const OPS_USAGE = `Usage: rock-legends verify FILE | --data FILE|postgres://…
       rock-legends backup FILE [--data FILE|postgres://…]
       rock-legends restore FILE --data FILE|postgres://…
       rock-legends copy --from FILE|postgres://… --to FILE|postgres://… [--replace]

  verify   checks a backup FILE (its format, its checksum and everything it holds), or a store: a data file with
           its journal (read as it is, without its lock, changing nothing) or a database. Exit 0 when sound, 1
           naming each problem found, 2 for a usage error.
  backup   writes everything the store holds (artists, albums, accounts with their password hashes, tokens and
           keys as hashes, id counters) to FILE, a new file, all at once (never half a file under that name). A
           data file a running server owns is backed up through that server, which keeps serving; a database is
           read in one consistent view, even while replicas serve it. --data defaults to ROCK_LEGENDS_DATA, then
           ./data/db.json.
  restore  replaces everything in the store with the backup FILE, after checking it, all or nothing; the store
           must not be in use by a running server. What it replaces is kept aside, and it says where: a data file
           and its journal as FILE.before-restore-TIME(.journal) beside it; a database's old content as a backup
           file rock-legends.before-restore-TIME.json beside the backup FILE.
  copy     moves everything a store holds to another, either kind to either kind (a data file to PostgreSQL, or
           back), ids and counters included, so every URL, token and key keeps working. It checks the source as
           verify does, refuses a target that holds records unless --replace, and reads the target back after,
           checking it holds what the source held. Neither store may be in use by a running server (a database:
           by any other connection); the source is left as it is. With --replace, what the target held is kept
           aside, as restore keeps it: a data file as FILE.before-copy-TIME(.journal) beside it; a database as the
           backup file rock-legends.before-copy-TIME.json in the current directory. All or nothing.
`

/** Reads the arguments after `verify`, `backup`, `restore` or `copy`. */
export function parseOpsArgs(
  command: StoreCommand,
  argv: readonly string[],
  env: Environment,
): { action: 'ops'; config: OpsConfig } | { action: 'ops-help' } {
  if (command === 'copy') return parseCopyArgs(argv, env)
  const line = readCommandLine(
    command,
    argv,
    env,
    (flag) => `${command} takes only --data besides its FILE, not "${flag}"`,
  )
  if (line.flagged('help')) return { action: 'ops-help' }
  const [file, extra] = line.words
  if (extra !== undefined) throw new UsageError(`${command} takes one FILE, not also "${extra}"`)
  // verify and restore take the store only from --data (the table says so): named on purpose, never a default.
  const data = line.value('data')
  if (data === IN_MEMORY) throw new UsageError(`--data :memory: holds nothing to ${command}`)
  if (command === 'verify') {
    if ((file === undefined) === (data === undefined))
      throw new UsageError('verify takes a backup FILE or --data FILE|postgres://…, one of the two')
    return { action: 'ops', config: { command, file, data } }
  }
  if (file === undefined) throw new UsageError(`${command} needs the backup FILE`)
  if (data === undefined) throw new UsageError('restore needs --data FILE|postgres://…, the store to replace')
  return { action: 'ops', config: { command, file, data } }
}

/** Reads the arguments after `copy`: both stores are named on purpose, never taken from the environment. */
function parseCopyArgs(
  argv: readonly string[],
  env: Environment,
): { action: 'ops'; config: OpsConfig } | { action: 'ops-help' } {
  const line = readCommandLine('copy', argv, env, (flag) => `copy takes --from, --to and --replace, not "${flag}"`)
  if (line.flagged('help')) return { action: 'ops-help' }
  if (line.words.length > 0) throw new UsageError(`copy takes --from, --to and --replace, not "${line.words[0]}"`)
  const from = line.value('from')
  const to = line.value('to')
  for (const [name, store] of [
    ['from', from],
    ['to', to],
  ] as const)
    if (store === IN_MEMORY) throw new UsageError(`--${name} :memory: is no store to copy ${name}`)
  if (from === undefined || to === undefined)
    throw new UsageError('copy needs --from FILE|postgres://… and --to FILE|postgres://…')
  return { action: 'ops', config: { command: 'copy', from, to, replace: line.value('replace') ?? false } }
}
