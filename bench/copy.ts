/**
 * `bun bench/copy.ts [--artists N] [--albums-every N] [--rounds N] [--write]`: how long `rock-legends copy` takes to
 * move a large store from a JSON data file to PostgreSQL, and back.
 *
 * A data file of `--artists` (100,000) artists, one album for every `--albums-every` (4) artists, and a few accounts
 * with tokens and keys, is written once (the seeded catalogue's records, repeated with new ids). A PostgreSQL of its
 * own, with its durable defaults (fsync and synchronous_commit on), is started for the run. Each round times, as an
 * operator runs them, the compiled executable's:
 *
 * - `copy --from db.json --to postgres://…` into a fresh, empty database: the move an operator makes once, the figure
 *   that counts;
 * - `copy --from postgres://… --to back.json` into a new data file (context);
 * - `copy --from db.json --to postgres://… --replace` over the filled database, which first saves what it replaces as
 *   a backup file (context).
 *
 * Every one reads its source whole, checks it as `verify` does, writes the target, and reads the target back to
 * check it holds the same (the checksum): the times include all of that and the process's start. `--write` records
 * the section "Moving between stores" in bench/RESULTS.md.
 */
import { mkdirSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import { ensureBinary, startBinary } from '../test/support/binary.ts'
import { describeMachine } from './machine.ts'
import { count, machineTable, median, table, utc } from './markdown.ts'
import { writeNamedSection } from './results-file.ts'
import { startBenchPostgres } from './sql-bench.ts'

const args = process.argv.slice(2)
const option = (name: string, fallback: number) => {
  const at = args.indexOf(name)
  return at >= 0 ? Number(args[at + 1]) : fallback
}
const ARTISTS = option('--artists', 100_000)
const ALBUMS_EVERY = option('--albums-every', 4)
const ROUNDS = option('--rounds', 3)
const KEY = 'bench-key'

const seconds = (ms: number) => `${(ms / 1000).toFixed(2)} s`

/** Runs the executable with `args` in `cwd`, and answers how long it took (ms); throws unless it exits 0. */
async function timed(binary: string, cwd: string, ...command: string[]): Promise<number> {
  const started = performance.now()
  const child = Bun.spawn([binary, ...command], { cwd, stdout: 'pipe', stderr: 'pipe' })
  const [stdout, stderr, code] = await Promise.all([
    new Response(child.stdout).text(),
    new Response(child.stderr).text(),
    child.exited,
  ])
  const took = performance.now() - started
  if (code !== 0) throw new Error(`rock-legends ${command.join(' ')} exited ${code}: ${stderr}${stdout}`)
  return took
}

/** A data file of `ARTISTS` artists and their albums, with the accounts of a server that ran on it. */
async function makeDataFile(binary: string, dir: string): Promise<string> {
  // The seeded catalogue and a few accounts, made by the executable itself.
  const seeded = join(dir, 'seeded', 'db.json')
  const server = await startBinary(['--data', seeded, '--seed', '--port', '0', '--api-key', KEY, '--log', 'off'])
  for (let user = 1; user <= 3; user++) {
    const account = { name: `User ${user}`, email: `user${user}@example.com`, password: 'i-love-rock' }
    const post = (path: string, body: unknown, headers: Record<string, string> = {}) =>
      fetch(`${server.url}${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...headers },
        body: JSON.stringify(body),
      }).then((response) => response.json() as Promise<Record<string, unknown>>)
    await post('/api/v1/user/signup', account)
    const { token } = await post('/api/v1/user/login', account)
    await post('/api/v1/user/api-keys', { name: 'ci' }, { authorization: `Bearer ${token}` })
  }
  await server.stop()
  const document = await Bun.file(seeded).json()
  const artists = Array.from({ length: ARTISTS }, (_, index) => ({
    ...document.artists[index % document.artists.length],
    id: index + 1,
  }))
  const albums = Array.from({ length: Math.floor(ARTISTS / ALBUMS_EVERY) }, (_, index) => ({
    ...document.albums[index % document.albums.length],
    id: index + 1,
    artistId: index * ALBUMS_EVERY + 1,
  }))
  const file = join(dir, 'source', 'db.json')
  mkdirSync(join(dir, 'source'), { mode: 0o755 })
  writeFileSync(
    file,
    JSON.stringify({
      ...document,
      counters: { ...document.counters, artists: artists.length, albums: albums.length },
      artists,
      albums,
    }),
    { mode: 0o600 },
  )
  // Checked by the executable, as the copy will check it.
  await timed(binary, dir, 'verify', '--data', file)
  return file
}

async function main() {
  const binary = await ensureBinary()
  const dir = join(tmpdir(), `rock-legends-bench-copy-${process.pid}`)
  mkdirSync(dir, { recursive: true })
  const postgres = await startBenchPostgres(join(dir, 'postgres'))
  try {
    const source = await makeDataFile(binary, dir)
    const size = statSync(source).size
    const machine = await describeMachine('not used')
    const loadBefore = loadavg()
    const started = new Date()
    const rows: { into: number; back: number; replace: number }[] = []
    for (let round = 1; round <= ROUNDS; round++) {
      const database = `copy_${round}`
      await postgres.createDatabase(database)
      const url = postgres.url(database)
      const work = join(dir, `round-${round}`)
      mkdirSync(work)
      const into = await timed(binary, work, 'copy', '--from', source, '--to', url)
      const back = await timed(binary, work, 'copy', '--from', url, '--to', join(work, 'back', 'db.json'))
      const replace = await timed(binary, work, 'copy', '--from', source, '--to', url, '--replace')
      rows.push({ into, back, replace })
      console.error(
        `round ${round}: JSON → PostgreSQL ${seconds(into)}, back ${seconds(back)}, --replace ${seconds(replace)}`,
      )
      rmSync(work, { recursive: true, force: true })
    }
    const loadAfter = loadavg()
    const load = (values: number[]) => values.map((value) => value.toFixed(2)).join(', ')
    const times = (pick: (row: (typeof rows)[number]) => number, bold = false) => {
      const middle = seconds(median(rows.map(pick)))
      return [bold ? `**${middle}**` : middle, rows.map((row) => seconds(pick(row))).join(', ')]
    }
    const results = table(
      [
        ['Copy', 'left'],
        ['Median', 'right'],
        ['Per round', 'left'],
      ],
      [
        ['**JSON → PostgreSQL**, into an empty database', ...times((row) => row.into, true)],
        ['PostgreSQL → JSON, into a new data file', ...times((row) => row.back)],
        [
          'JSON → PostgreSQL `--replace`, over the same data (kept aside as a backup first)',
          ...times((row) => row.replace),
        ],
      ],
    )
    const markdown = `## Moving between stores

\`bun bench/copy.ts --rounds ${ROUNDS}\` (${utc(started)}): the compiled executable's \`rock-legends copy\` of a data file of ${count(ARTISTS)} artists, ${count(Math.floor(ARTISTS / ALBUMS_EVERY))} albums, 3 accounts with a token and a key each (${(size / 1e6).toFixed(1)} MB), into PostgreSQL ${postgres.version} on the same machine (its own cluster, fsync and synchronous_commit on, over the unix socket), and back. Each time is the whole command as an operator runs it: the process's start, reading and checking the source (every invariant \`verify\` checks), writing the target (one transaction into PostgreSQL; a new file renamed into place), and reading the target back to compare its checksum. Load average before and after: ${load(loadBefore)} → ${load(loadAfter)} (other engineers' tests share the two cores).

${machineTable(machine)}

${results}
`
    console.log(markdown)
    if (args.includes('--write')) await writeNamedSection('copy', markdown)
  } finally {
    await postgres.stop()
    rmSync(dir, { recursive: true, force: true })
  }
}

await main()
