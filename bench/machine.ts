import { cpus, release, totalmem } from 'node:os'

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
