/**
 * `bun run bench`: the ceiling, rock-legends and json-server side by side (bench/compare.ts), then rock-legends from
 * 100 to 100,000 artists (bench/scale.ts). `bun bench/run.ts compare` and `bun run bench:scale` (`… scale`) run one.
 *
 * Prints each Markdown section and writes it into bench/RESULTS.md. Needs wrk, and node for json-server; builds
 * dist/rock-legends first when it is missing or older than its sources.
 */
import { mkdir, mkdtemp, rm } from 'node:fs/promises'
import { join } from 'node:path'
import jsonServerPackage from '../node_modules/json-server/package.json' with { type: 'json' }
import { ensureBinary } from '../test/support/binary.ts'
import { COMPARE_DURATION_SECONDS, measureComparison } from './compare.ts'
import { renderComparison } from './compare-report.ts'
import { describeMachine } from './machine.ts'
import { RESULTS, type Section, writeSection } from './results-file.ts'
import { measureScale } from './scale.ts'
import { renderScale } from './scale-report.ts'
import { BINARY } from './server-process.ts'
import { WRK_INSTALL, wrkVersion } from './wrk.ts'

const WORK = join(import.meta.dir, '.work')

const progress = (line: string) => process.stderr.write(`bench: ${line}\n`)

/** Stops with a hint when a tool the benchmark needs is not on the PATH. */
function requireTool(tool: string, hint: string): void {
  if (Bun.which(tool)) return
  process.stderr.write(`bench: ${tool} is not installed. ${hint}\n`)
  process.exit(1)
}

/** Node's version, e.g. `v20.20.2`. */
const nodeVersion = () => Bun.spawnSync(['node', '--version']).stdout.toString().trim()

/** What a mode (the first argument) measures, and the command that runs it, as the report shows it. */
interface Mode {
  sections: readonly Section[]
  command: string
}

const MODES: Record<string, Mode> = {
  all: { sections: ['compare', 'scale'], command: 'bun run bench' },
  compare: { sections: ['compare'], command: 'bun bench/run.ts compare' },
  scale: { sections: ['scale'], command: 'bun run bench:scale' },
}

async function measure(section: Section, command: string, workDir: string, wrk: string): Promise<string> {
  const machine = await describeMachine(wrk)
  const date = new Date()
  if (section === 'compare') {
    const minutes = Math.ceil(COMPARE_DURATION_SECONDS / 60)
    progress(`the ceiling, rock-legends and json-server side by side: about ${minutes} minutes`)
    const { results, accessLogs } = await measureComparison(workDir, progress)
    return renderComparison({
      date,
      machine,
      command,
      node: nodeVersion(),
      jsonServer: jsonServerPackage.version,
      results,
      accessLogs,
    })
  }
  progress('rock-legends from 100 to 100,000 artists: about 3 minutes')
  return renderScale({ date, machine, command, results: await measureScale(workDir, progress) })
}

async function main(): Promise<void> {
  const mode = MODES[process.argv[2] ?? 'all']
  if (!mode) throw new Error(`usage: bun bench/run.ts [${Object.keys(MODES).join('|')}]`)
  const { sections, command } = mode
  requireTool('wrk', `Install it (as root) with:\n\n  ${WRK_INSTALL}\n`)
  if (sections.includes('compare')) requireTool('node', 'json-server runs on Node.js: see https://nodejs.org')
  const wrk = wrkVersion() ?? ''
  if (process.env.BENCH_BINARY) progress(`measuring ${BINARY} (BENCH_BINARY)`)
  else await ensureBinary()
  await mkdir(WORK, { recursive: true })
  const workDir = await mkdtemp(join(WORK, 'run-'))
  try {
    for (const section of sections) {
      const markdown = await measure(section, command, workDir, wrk)
      process.stdout.write(markdown)
      await writeSection(section, markdown)
      progress(`wrote the ${section} section of ${RESULTS}`)
    }
  } finally {
    await rm(workDir, { recursive: true, force: true })
  }
}

await main()
