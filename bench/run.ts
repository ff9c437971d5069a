/**
 * `bun run bench`: read throughput of the compiled server against a bare Bun.serve ceiling, and durable write
 * throughput at two store sizes. Prints a Markdown report and writes it to bench/RESULTS.md, keeping the notes
 * below NOTES_MARKER. Needs wrk; builds dist/rock-legends first when it is missing or older than its sources.
 */
import { existsSync, readdirSync, statSync } from 'node:fs'
import { mkdir, mkdtemp, rm } from 'node:fs/promises'
import { join } from 'node:path'
import { describeMachine } from './machine.ts'
import { measureReads, READ_DURATION_SECONDS } from './reads.ts'
import { NOTES_MARKER, renderReport } from './report.ts'
import { BINARY } from './server-process.ts'
import { measureWrites, WRITE_STORE_SIZES, type WriteResult } from './writes.ts'
import { WRK_INSTALL, wrkVersion } from './wrk.ts'

const ROOT = join(import.meta.dir, '..')
const WORK = join(import.meta.dir, '.work')
const RESULTS = join(import.meta.dir, 'RESULTS.md')
/** What the binary is built from. */
const BUILD_INPUTS = ['src', 'package.json', 'bun.lock', 'data/legends.json']

const progress = (line: string) => process.stderr.write(`bench: ${line}\n`)

// Others may be editing the sources meanwhile: a file that vanished between listing and stat counts as unchanged.
const changedAt = (path: string) => statSync(path, { throwIfNoEntry: false })?.mtimeMs ?? 0

/** The latest modification time of `path`, or of any file below it. */
function newestChange(path: string): number {
  if (!existsSync(path) || !statSync(path).isDirectory()) return changedAt(path)
  const files = readdirSync(path, { recursive: true, encoding: 'utf8' })
  return Math.max(changedAt(path), ...files.map((file) => changedAt(join(path, file))))
}

async function ensureBinary(): Promise<void> {
  const built = changedAt(BINARY)
  if (built >= Math.max(...BUILD_INPUTS.map((input) => newestChange(join(ROOT, input))))) return
  progress('dist/rock-legends is missing or older than its sources: bun run build')
  const build = Bun.spawn([process.execPath, 'run', 'build'], { cwd: ROOT, stdout: 'inherit', stderr: 'inherit' })
  if ((await build.exited) !== 0) throw new Error('bun run build failed')
}

async function keptNotes(): Promise<string> {
  const file = Bun.file(RESULTS)
  const previous = (await file.exists()) ? await file.text() : ''
  const at = previous.indexOf(NOTES_MARKER)
  return at < 0 ? `${NOTES_MARKER}\n` : previous.slice(at)
}

async function main(): Promise<void> {
  const wrk = wrkVersion()
  if (!wrk) {
    process.stderr.write(`bench: wrk is not installed. Install it (as root) with:\n\n  ${WRK_INSTALL}\n\n`)
    process.exit(1)
  }
  await ensureBinary()
  const machine = await describeMachine(wrk)
  await mkdir(WORK, { recursive: true })
  const workDir = await mkdtemp(join(WORK, 'run-'))
  try {
    progress(`reads against the ceiling: about ${Math.ceil(READ_DURATION_SECONDS / 60)} minutes`)
    const reads = await measureReads(workDir, progress)
    const writes: WriteResult[] = []
    for (const seeded of WRITE_STORE_SIZES) {
      progress(`durable writes from ${seeded} seeded artists`)
      const result = await measureWrites(workDir, seeded)
      progress(`${Math.round(result.run.requestsPerSecond)} writes/s`)
      writes.push(result)
    }
    const report = renderReport({ date: new Date(), machine, reads, writes })
    process.stdout.write(report)
    await Bun.write(RESULTS, `${report}\n${await keptNotes()}`)
    progress(`wrote ${RESULTS}`)
  } finally {
    await rm(workDir, { recursive: true, force: true })
  }
}

await main()
