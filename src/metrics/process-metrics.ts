import { readdirSync, readFileSync } from 'node:fs'
import { type Family, Gauge, ReadCounter } from './registry.ts'

/**
 * Clock ticks per second of /proc's times (`USER_HZ`): 100 on every architecture Bun builds for, the value the
 * Prometheus Go client's procfs assumes too (JavaScript cannot ask `sysconf`).
 */
const USER_HZ = 100

/** The text of a file under /proc, or undefined where there is none (not Linux) or it cannot be read. */
function procText(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8')
  } catch {
    return undefined
  }
}

/**
 * The fields of /proc/self/stat after the command name, which may hold spaces and parentheses itself: `fields[0]` is
 * the state (field 3 of proc(5)), so field N is `fields[N - 3]`.
 */
function statFields(): string[] | undefined {
  const text = procText('/proc/self/stat')
  return text?.slice(text.lastIndexOf(')') + 2).split(' ')
}

/**
 * When the process started (Unix time, seconds), as the official clients compute it on Linux: its start in clock ticks
 * since boot (/proc/self/stat) plus the boot time (/proc/stat). Elsewhere, when the runtime's clock began.
 */
function startTime(): number {
  const started = Number(statFields()?.[22 - 3])
  const boot = Number(/^btime (\d+)$/m.exec(procText('/proc/stat') ?? '')?.[1])
  if (Number.isFinite(started) && Number.isFinite(boot)) return boot + started / USER_HZ
  return performance.timeOrigin / 1000
}

/** Open file descriptors: the entries of /proc/self/fd (the listing's own included, as the official clients count). */
function openFds(): number | undefined {
  try {
    return readdirSync('/proc/self/fd').length
  } catch {
    return undefined
  }
}

/** The soft limit of open file descriptors (/proc/self/limits); undefined when unlimited or unknown. */
function maxFds(): number | undefined {
  const limit = /^Max open files\s+(\d+)/m.exec(procText('/proc/self/limits') ?? '')?.[1]
  return limit === undefined ? undefined : Number(limit)
}

/**
 * The standard process metrics under the names and meanings the official Prometheus clients give them
 * (`process_cpu_seconds_total`, `process_resident_memory_bytes`, `process_virtual_memory_bytes`, `process_open_fds`,
 * `process_max_fds`, `process_start_time_seconds`), so that dashboards and alerts made for any process work here.
 * Read when scraped: a few small files under /proc and a directory listing. Where there is no /proc (macOS,
 * Windows), the CPU time, resident memory and start time alone, from the runtime.
 */
export function processFamilies(): Family[] {
  const started = startTime()
  return [
    new ReadCounter('process_cpu_seconds_total', 'Total user and system CPU time spent in seconds.', [
      {
        read: () => {
          const { user, system } = process.cpuUsage()
          return (user + system) / 1e6
        },
      },
    ]),
    new Gauge('process_resident_memory_bytes', 'Resident memory size in bytes.', [
      { read: () => process.memoryUsage.rss() },
    ]),
    new Gauge('process_virtual_memory_bytes', 'Virtual memory size in bytes.', [
      { read: () => Number(statFields()?.[23 - 3]) || undefined },
    ]),
    new Gauge('process_open_fds', 'Number of open file descriptors.', [{ read: openFds }]),
    new Gauge('process_max_fds', 'Maximum number of open file descriptors.', [{ read: maxFds }]),
    new Gauge('process_start_time_seconds', 'Start time of the process since unix epoch in seconds.', [
      { read: () => started },
    ]),
  ]
}
