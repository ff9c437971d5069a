/**
 * `bun bench/online-backup.ts [--artists N] [--rounds R] [--seconds S]`: how long a backup of a running server pauses
 * anyone, since the backup is made by the server that goes on answering. `dist/rock-legends` over a JSON data file
 * of N generated artists (100,000 by default, with their albums) under a read load and a write load at once (`wrk
 * -t1 -c16` on GET one artist, and a 4-connection loop of creates from this process); in each round, one run without
 * a backup and one with `rock-legends backup FILE --data db.json` started a second in (it goes through the server,
 * `GET /__admin/backup`). Prints per round the longest read (wrk's max), the reads' p99, the longest create and how
 * long the backup took, with the machine and its load.
 */
import { mkdtemp, rm } from 'node:fs/promises'
import { loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { writeCatalogue } from './catalogue.ts'
import { describeMachine } from './machine.ts'
import { BINARY, startRockLegends } from './server-process.ts'
import { wrkVersion } from './wrk.ts'

const { values } = parseArgs({
  args: process.argv.slice(2),
  options: {
    artists: { type: 'string', default: '100000' },
    rounds: { type: 'string', default: '3' },
    seconds: { type: 'string', default: '8' },
  },
})
const artists = Number(values.artists)
const rounds = Number(values.rounds)
const seconds = Number(values.seconds)
const KEY = 'bench-online-backup-key'
const progress = (line: string) => process.stderr.write(`online-backup: ${line}\n`)

const UNIT_MS: Record<string, number> = { us: 0.001, ms: 1, s: 1000 }
const ms = (text: string) => {
  const match = /^([\d.]+)(us|ms|s)$/.exec(text)
  return match ? Number(match[1]) * (UNIT_MS[match[2] as string] as number) : Number.NaN
}

/** Reads for `seconds`: wrk's max and p99 latency, in ms. */
async function reads(url: string): Promise<{ max: number; p99: number; requests: number }> {
  const wrk = Bun.spawn(
    ['wrk', '-t1', '-c16', `-d${seconds}s`, '--timeout', '30s', '--latency', `${url}/api/v1/artists/500`],
    {
      stdout: 'pipe',
    },
  )
  const out = await new Response(wrk.stdout).text()
  const max = /Latency\s+\S+\s+\S+\s+(\S+)/.exec(out)?.[1] ?? ''
  const p99 = /99%\s+(\S+)/.exec(out)?.[1] ?? ''
  const requests = Number(/(\d+) requests in/.exec(out)?.[1] ?? Number.NaN)
  return { max: ms(max), p99: ms(p99), requests }
}

/** Creates over 4 connections until `done`: the longest one, in ms. */
async function writes(url: string, done: Promise<unknown>): Promise<{ max: number; count: number }> {
  let going = true
  done.then(() => {
    going = false
  })
  let max = 0
  let count = 0
  await Promise.all(
    [0, 1, 2, 3].map(async () => {
      while (going) {
        const started = performance.now()
        const response = await fetch(`${url}/api/v1/artists`, {
          method: 'POST',
          headers: { 'x-api-key': KEY, 'content-type': 'application/json' },
          body: JSON.stringify({ name: 'Written during the bench' }),
        })
        await response.arrayBuffer()
        max = Math.max(max, performance.now() - started)
        count++
      }
    }),
  )
  return { max, count }
}

const dir = await mkdtemp(join(tmpdir(), 'rl-online-backup-'))
try {
  const catalogue = join(dir, 'catalogue.json')
  await writeCatalogue(catalogue, artists)
  const data = join(dir, 'db.json')
  const server = await startRockLegends([`--seed=${catalogue}`, '--data', data, '--api-key', KEY, '--log', 'off'])
  const loadBefore = loadavg()[0] ?? 0
  const rows: string[] = []
  try {
    for (let round = 0; round < rounds; round++) {
      for (const withBackup of [false, true]) {
        const readRun = reads(server.url)
        let backupMs = Number.NaN
        const backupRun = (async () => {
          if (!withBackup) return
          await Bun.sleep(1000)
          const file = join(dir, `backup-${round}.json`)
          const started = performance.now()
          const child = Bun.spawn([BINARY, 'backup', file, '--data', data], { stdout: 'pipe', stderr: 'pipe' })
          const code = await child.exited
          backupMs = performance.now() - started
          if (code !== 0) throw new Error(`backup exited ${code}: ${await new Response(child.stderr).text()}`)
          await rm(file)
        })()
        const writeRun = writes(server.url, readRun)
        const [read, write] = await Promise.all([readRun, writeRun, backupRun])
        rows.push(
          `| ${round + 1} | ${withBackup ? `yes (${(backupMs / 1000).toFixed(2)} s)` : 'no'} | ${read.max.toFixed(1)} ms | ${read.p99.toFixed(1)} ms | ${read.requests.toLocaleString('en')} | ${write.max.toFixed(1)} ms | ${write.count.toLocaleString('en')} |`,
        )
        progress(`round ${round + 1}, ${withBackup ? 'with' : 'without'} a backup`)
      }
    }
  } finally {
    await server.stop()
  }
  const machine = await describeMachine(wrkVersion() ?? 'wrk')
  console.log(
    `Measured ${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC with \`bun bench/online-backup.ts --artists ${artists} --rounds ${rounds} --seconds ${seconds}\` on ${machine.cpu}, ${machine.cores} cores, Bun ${Bun.version}; one-minute load average ${loadBefore.toFixed(2)} before and ${(loadavg()[0] ?? 0).toFixed(2)} after. ${artists.toLocaleString('en')} artists with their albums in a JSON data file; reads \`wrk -t1 -c16\` on GET one artist, creates over 4 connections, both for ${seconds} s; the backup starts 1 s in.\n`,
  )
  console.log('| Round | Backup (its duration) | Longest read | Reads p99 | Reads | Longest create | Creates |')
  console.log('| ---: | --- | ---: | ---: | ---: | ---: | ---: |')
  for (const row of rows) console.log(row)
} finally {
  await rm(dir, { recursive: true, force: true })
}
