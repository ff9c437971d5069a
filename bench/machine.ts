import { cpus, loadavg, release, totalmem } from 'node:os'

/** The machine a benchmark ran on, as shown in its report. */
export interface Machine {
  cpu: string
  cores: number
  memory: string
  kernel: string
  bun: string
  wrk: string
}

async function cpuModel(): Promise<string> {
  const info = await Bun.file('/proc/cpuinfo')
    .text()
    .catch(() => '')
  const model = /^model name\s*:\s*(.+)$/m.exec(info)?.[1]?.trim() ?? cpus()[0]?.model ?? 'unknown'
  return /^flags\s*:.*\bhypervisor\b/m.test(info) ? `${model} (virtual machine)` : model
}

/** Describes this machine; `wrk` is the version line of the load generator. */
export async function describeMachine(wrk: string): Promise<Machine> {
  return {
    cpu: await cpuModel(),
    cores: cpus().length,
    memory: `${(totalmem() / 2 ** 30).toFixed(1)} GiB`,
    kernel: `Linux ${release()}`,
    bun: Bun.version,
    wrk,
  }
}

/**
 * The first line of a side-by-side report: when, with what command, how the servers were loaded (`how`, if said), on
 * what machine, and its one-minute load average from `loadBefore` to now, since other work on a shared machine moves
 * every absolute figure.
 */
export async function measuredOn(command: string, loadBefore: number, how?: string): Promise<string> {
  const { cpu, cores } = await describeMachine('')
  const when = new Date().toISOString().slice(0, 16).replace('T', ' ')
  const loadAfter = loadavg()[0] ?? 0
  return `Measured ${when} UTC with \`${command}\`${how ? ` (${how})` : ''} on ${cpu}, ${cores} cores, Bun ${Bun.version}; one-minute load average ${loadBefore.toFixed(2)} before and ${loadAfter.toFixed(2)} after (the machine is shared).`
}
