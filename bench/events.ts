/**
 * `bun bench/events.ts [--subscribers N] [--rounds N] [--seconds N] [--events N] [--write]`: what live updates
 * (`GET /api/v1/events`) cost, side by side in one run.
 *
 * One server (bench/events-server.ts: `startServer` in memory, seeded, with the stream bounds raised so that every
 * subscriber fits on one loopback address) is measured round by round with no subscriber and with `--subscribers`
 * (1,000) idle ones, raw sockets of this process that read what comes:
 *
 * - GET one artist: wrk `-t2 -c32`, requests/s;
 * - creates: wrk `-t1 -c1` (one create at a time, so the latency is the write's and its fan-out's), p50 and p99;
 * - the memory per subscriber: the server's resident memory with them minus without, over their number;
 * - fan-out: `--events` creates, each waited for until every subscriber has its event; the time from sending the
 *   create to the last (and the median) subscriber's receipt, p50 and p99 over the events.
 *
 * The subscribers' reading runs in this process, on the same two cores as the server and wrk: what the server pays
 * for writing the events is measured with what this process pays to read them. `--write` records the section "Live
 * updates" in RESULTS.md.
 */
import { loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import { describeMachine } from './machine.ts'
import { count, machineTable, median, ms, ratio, table, utc } from './markdown.ts'
import { writeNamedSection } from './results-file.ts'
import { wrkCommand, wrkVersion } from './wrk.ts'

const args = process.argv.slice(2)
const option = (name: string, fallback: number) => {
  const at = args.indexOf(name)
  return at >= 0 ? Number(args[at + 1]) : fallback
}
const SUBSCRIBERS = option('--subscribers', 1000)
const ROUNDS = option('--rounds', 3)
const SECONDS = option('--seconds', 5)
const EVENTS = option('--events', 20)
const CREATES = option('--creates', 50)
const PACE_MS = 100
const KEY = 'bench-key'

/** The user and system CPU time process `pid` has used, in ms (from /proc). */
async function cpuOf(pid: number): Promise<{ user: number; system: number }> {
  const stat = await Bun.file(`/proc/${pid}/stat`).text()
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
  // USER_HZ is 100 on Linux.
  return { user: Number(fields[11]) * 10, system: Number(fields[12]) * 10 }
}

/** The server under test, as a child process. */
async function startServer() {
  const memoryFile = join(tmpdir(), `events-bench-${process.pid}.json`)
  const child = Bun.spawn([process.execPath, join(import.meta.dir, 'events-server.ts')], {
    stdout: 'pipe',
    stderr: 'inherit',
    env: { ...process.env, BENCH_MEMORY_FILE: memoryFile },
  })
  const reader = child.stdout.getReader()
  let text = ''
  while (!/listening on (\S+)/.test(text)) {
    const { value, done } = await reader.read()
    if (done) throw new Error(`the server exited: ${text}`)
    text += new TextDecoder().decode(value)
  }
  const url = /listening on (\S+)/.exec(text)?.[1] as string
  /** After a full collection: the resident memory and the JavaScript heap in use, in bytes. */
  const memory = async () => {
    await Bun.write(memoryFile, '')
    child.kill('SIGUSR2')
    // Read once the server has written it whole.
    for (let i = 0; i < 200; i++) {
      await Bun.sleep(50)
      try {
        const { rss, heapUsed } = JSON.parse(await Bun.file(memoryFile).text()) as { rss: number; heapUsed: number }
        return { rss, heap: heapUsed }
      } catch {}
    }
    throw new Error('the server wrote no memory figures')
  }
  const stop = () => {
    child.kill('SIGTERM')
    return child.exited
  }
  return { url, memory, stop, cpu: () => cpuOf(child.pid) }
}

/**
 * `n` subscribers of the stream in a process of their own (bench/events-subscribers.ts): resolves once each has its
 * `ready` event. `all(k)` resolves with the first, median and last arrival of event `fanout-k` (ms since the epoch).
 */
async function subscribe(url: string, n: number) {
  const child = Bun.spawn([process.execPath, join(import.meta.dir, 'events-subscribers.ts'), url, String(n)], {
    stdin: 'pipe',
    stdout: 'pipe',
    stderr: 'inherit',
  })
  const seen = new Map<number, number[]>()
  const waiters = new Map<number, (times: number[]) => void>()
  const ready = Promise.withResolvers<void>()
  ;(async () => {
    let buffer = ''
    for await (const chunk of child.stdout) {
      buffer += new TextDecoder().decode(chunk)
      let newline = buffer.indexOf('\n')
      while (newline >= 0) {
        const line = buffer.slice(0, newline)
        buffer = buffer.slice(newline + 1)
        newline = buffer.indexOf('\n')
        if (line === 'ready') ready.resolve()
        else {
          const [k, ...times] = line.split(' ').map(Number)
          seen.set(k as number, times)
          waiters.get(k as number)?.(times)
        }
      }
    }
  })()
  await Promise.race([
    ready.promise,
    Bun.sleep(60_000).then(() => {
      throw new Error(`the ${n} subscribers did not all get their ready event`)
    }),
  ])
  return {
    all: (k: number) =>
      new Promise<number[]>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`event ${k} did not reach every subscriber`)), 10_000)
        waiters.set(k, (times) => {
          clearTimeout(timer)
          resolve(times)
        })
        const times = seen.get(k)
        if (times) waiters.get(k)?.(times)
      }),
    cpu: () => cpuOf(child.pid),
    close: async () => {
      child.stdin.end()
      await child.exited
    },
  }
}

/** `CREATES` creates one after another, `PACE_MS` apart, from this process: the latency of each, to its 201 (ms). */
async function pacedCreates(url: string): Promise<number[]> {
  const latencies: number[] = []
  for (let i = 0; i < CREATES; i++) {
    const sent = performance.now()
    const answer = await fetch(`${url}/api/v1/artists`, {
      method: 'POST',
      headers: { 'x-api-key': KEY, 'content-type': 'application/json' },
      body: '{"name":"Paced Artist"}',
    })
    await answer.arrayBuffer()
    if (answer.status !== 201) throw new Error(`create answered ${answer.status}`)
    latencies.push(performance.now() - sent)
    await Bun.sleep(PACE_MS)
  }
  return latencies
}

interface Wrk {
  rps: number
  p50: number
  p99: number
}

/** One wrk run, its requests/s and latencies (ms). */
async function wrk(url: string, connections: number, threads: number, script?: string[]): Promise<Wrk> {
  const command = wrkCommand({ url, connections, seconds: SECONDS, script: script?.[0], scriptArgs: script?.slice(1) })
  command[1] = `-t${threads}`
  const child = Bun.spawn(command, { stdout: 'pipe', stderr: 'pipe' })
  const output = await new Response(child.stdout).text()
  await child.exited
  if (/Non-2xx|Socket errors/.test(output)) throw new Error(`wrk saw failures:\n${output}`)
  const unit = { us: 0.001, ms: 1, s: 1000 } as Record<string, number>
  const latency = (p: number) => {
    const match = new RegExp(`^\\s*${p}%\\s+([\\d.]+)(us|ms|s)`, 'm').exec(output)
    return Number(match?.[1]) * (unit[match?.[2] ?? 'ms'] ?? 1)
  }
  return { rps: Number(/^Requests\/sec:\s+([\d.]+)/m.exec(output)?.[1]), p50: latency(50), p99: latency(99) }
}

const percentile = (values: readonly number[], p: number) => {
  const sorted = values.toSorted((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] as number
}

async function main() {
  const version = wrkVersion()
  if (!version) throw new Error('wrk is needed: apt-get install -y wrk')
  const machine = await describeMachine(version)
  const loadBefore = loadavg()
  // Memory first, on a fresh server: what the rounds' load leaves allocated would hide what the streams take.
  const fresh = await startServer()
  const empty = await fresh.memory()
  const measured = await subscribe(fresh.url, SUBSCRIBERS)
  await Bun.sleep(2000)
  const full = await fresh.memory()
  await measured.close()
  await fresh.stop()
  const perSubscriber = { rss: (full.rss - empty.rss) / SUBSCRIBERS, heap: (full.heap - empty.heap) / SUBSCRIBERS }
  const server = await startServer()
  const createScript = [join(import.meta.dir, 'wrk', 'post-artist.lua'), KEY, '{"name":"Bench Artist"}']
  const rounds: { get: [Wrk, Wrk]; create: [Wrk, Wrk]; paced: [number[], number[]] }[] = []
  const fanout: { last: number; middle: number; acknowledged: number }[] = []
  const fanoutCpu = { server: { user: 0, system: 0 }, subscribers: { user: 0, system: 0 }, events: 0 }
  let k = 0
  try {
    for (let round = 0; round < ROUNDS; round++) {
      const getNone = await wrk(`${server.url}/api/v1/artists/1`, 32, 2)
      const pacedNone = await pacedCreates(server.url)
      const createNone = await wrk(`${server.url}/api/v1/artists`, 1, 1, createScript)
      const subscribers = await subscribe(server.url, SUBSCRIBERS)
      await Bun.sleep(3000)
      const getWith = await wrk(`${server.url}/api/v1/artists/1`, 32, 2)
      const pacedWith = await pacedCreates(server.url)
      const [serverBefore, subscribersBefore] = await Promise.all([server.cpu(), subscribers.cpu()])
      const events = Math.ceil(EVENTS / ROUNDS)
      for (let e = 0; e < events; e++) {
        const marker = k++
        const arrived = subscribers.all(marker)
        const sent = performance.timeOrigin + performance.now()
        const answer = await fetch(`${server.url}/api/v1/artists`, {
          method: 'POST',
          headers: { 'x-api-key': KEY, 'content-type': 'application/json' },
          body: JSON.stringify({ name: `fanout-${marker}` }),
        })
        const acknowledged = performance.timeOrigin + performance.now() - sent
        if (answer.status !== 201) throw new Error(`create answered ${answer.status}`)
        const [, middle = 0, last = 0] = (await arrived).map((at) => at - sent)
        fanout.push({ last, middle, acknowledged })
        await Bun.sleep(100)
      }
      const [serverAfter, subscribersAfter] = await Promise.all([server.cpu(), subscribers.cpu()])
      fanoutCpu.events += events
      for (const kind of ['user', 'system'] as const) {
        fanoutCpu.server[kind] += serverAfter[kind] - serverBefore[kind]
        fanoutCpu.subscribers[kind] += subscribersAfter[kind] - subscribersBefore[kind]
      }
      // Last: creates back to back, each fanned out to every subscriber, leave a backlog for them to read.
      const createWith = await wrk(`${server.url}/api/v1/artists`, 1, 1, createScript)
      await subscribers.close()
      await Bun.sleep(500)
      rounds.push({
        get: [getNone, getWith],
        create: [createNone, createWith],
        paced: [pacedNone, pacedWith],
      })
      console.error(
        `round ${round + 1}: GET ${count(getNone.rps)} → ${count(getWith.rps)} req/s; paced create p50 ${ms(percentile(pacedNone, 50))} → ${ms(percentile(pacedWith, 50))}; back-to-back create p50 ${ms(createNone.p50)} → ${ms(createWith.p50)}`,
      )
    }
  } finally {
    await server.stop()
  }
  const loadAfter = loadavg()
  const getRatios = rounds.map(({ get: [none, with_] }) => with_.rps / none.rps)
  const pacedP50 = rounds.map(({ paced: [none, with_] }) => percentile(with_, 50) / percentile(none, 50))
  const pacedP99 = rounds.map(({ paced: [none, with_] }) => percentile(with_, 99) / percentile(none, 99))
  const createP50 = rounds.map(({ create: [none, with_] }) => with_.p50 / none.p50)
  const createP99 = rounds.map(({ create: [none, with_] }) => with_.p99 / none.p99)
  const createRps = rounds.map(({ create: [none, with_] }) => with_.rps / none.rps)
  const kib = (bytes: number) => `${(bytes / 1024).toFixed(1)} KiB`
  const lasts = fanout.map((each) => each.last)
  const middles = fanout.map((each) => each.middle)
  const acks = fanout.map((each) => each.acknowledged)
  const rows = rounds.map(({ get, create, paced }, i) => [
    String(i + 1),
    `${count(get[0].rps)} / ${count(get[1].rps)}`,
    `${ms(percentile(paced[0], 50))} / ${ms(percentile(paced[1], 50))}`,
    `${ms(create[0].p50)} / ${ms(create[1].p50)}`,
    `${ms(create[0].p99)} / ${ms(create[1].p99)}`,
    `${count(create[0].rps)} / ${count(create[1].rps)}`,
  ])
  const markdown = `## Live updates

\`bun bench/events.ts --write\` (${utc(new Date())}): one server (bench/events-server.ts, \`startServer\` in memory with the seeded catalogue, its event-stream bounds raised so that ${count(SUBSCRIBERS)} subscribers fit on one loopback address), measured with no subscriber and with ${count(SUBSCRIBERS)} idle ones (raw sockets of a process of their own, bench/events-subscribers.ts), round by round; wrk ${SECONDS} s a run. Load average before and after: ${loadBefore.map((n) => n.toFixed(2)).join(', ')} → ${loadAfter.map((n) => n.toFixed(2)).join(', ')} (other engineers' tests share the two cores: the ratios are what count).

${machineTable(machine)}

${table(
  [
    ['Goal', 'left'],
    ['Measured (median of rounds)', 'right'],
    ['Per round', 'left'],
    ['Verdict', 'left'],
  ],
  [
    [
      `GET one artist (wrk -t2 -c32): req/s with ${count(SUBSCRIBERS)} subscribers over none ≥ 0.90×`,
      `**${ratio(median(getRatios))}**`,
      `${getRatios.map(ratio).join(', ')}`,
      `${median(getRatios) >= 0.9 ? 'met' : '**missed**'}`,
    ],
    [
      `Create latency (${CREATES} creates, ${PACE_MS} ms apart, to the 201), p50 with over none ≤ 1.10×`,
      `**${ratio(median(pacedP50))}**`,
      `${pacedP50.map(ratio).join(', ')}`,
      `${median(pacedP50) <= 1.1 ? 'met' : '**missed**'}`,
    ],
    [
      `Create latency, paced, p99 with over none`,
      `${ratio(median(pacedP99))}`,
      `${pacedP99.map(ratio).join(', ')}`,
      `context`,
    ],
    [
      `Creates back to back (wrk -t1 -c1, each fanned out to every subscriber): p50 latency with over none`,
      `${ratio(median(createP50))}`,
      `${createP50.map(ratio).join(', ')}`,
      `context`,
    ],
    [
      `Creates back to back: p99 with over none`,
      `${ratio(median(createP99))}`,
      `${createP99.map(ratio).join(', ')}`,
      `context`,
    ],
    [
      `Creates back to back: creates/s with over none`,
      `${ratio(median(createRps))}`,
      `${createRps.map(ratio).join(', ')}`,
      `context`,
    ],
    [
      `An event reaches all ${count(SUBSCRIBERS)} subscribers (from sending the create), p99 over ${fanout.length} events ≤ 100 ms`,
      `**${ms(percentile(lasts, 99))}** (p50 ${ms(percentile(lasts, 50))})`,
      `median subscriber: p50 ${ms(percentile(middles, 50))}, p99 ${ms(percentile(middles, 99))}; the create's 201: p50 ${ms(percentile(acks, 50))}`,
      `${percentile(lasts, 99) <= 100 ? 'met' : '**missed**'}`,
    ],
    [
      `CPU per event and its create (the fan-out loop, 100 ms apart): server`,
      `${ms(fanoutCpu.server.user / fanoutCpu.events)} user + ${ms(fanoutCpu.server.system / fanoutCpu.events)} system`,
      `the subscribers' process: ${ms(fanoutCpu.subscribers.user / fanoutCpu.events)} user + ${ms(fanoutCpu.subscribers.system / fanoutCpu.events)} system`,
      `measured`,
    ],
    [
      `Server memory per subscriber (a fresh server, after a full collection, with ${count(SUBSCRIBERS)} minus with none, over ${count(SUBSCRIBERS)})`,
      `**${kib(perSubscriber.rss)}** resident`,
      `JavaScript heap: ${kib(perSubscriber.heap)}`,
      `measured`,
    ],
  ],
)}

${table(
  [
    ['Round', 'right'],
    ['GET req/s: none / with', 'right'],
    ['Paced create p50: none / with', 'right'],
    ['Back-to-back p50: none / with', 'right'],
    ['Back-to-back p99: none / with', 'right'],
    ['Back-to-back creates/s: none / with', 'right'],
  ],
  rows,
)}

The GET runs see only idle streams. Each create with subscribers also sends its event to every one of them, once its 201 is written (the streams are told by a timer, and written in the turn after): ${count(SUBSCRIBERS)} socket sends by the server and ${count(SUBSCRIBERS)} reads by the subscribers' process, on the same two cores as the server and the client that times the create. Paced creates leave that work time to finish; back to back, each create waits for the previous one's fan-out, so those figures measure the fan-out's throughput, not an idle subscriber's cost. Memory is the server's own (kernel socket buffers not included).`
  console.log(markdown)
  if (args.includes('--write')) await writeNamedSection('events', markdown)
}

await main()
