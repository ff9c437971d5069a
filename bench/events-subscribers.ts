/**
 * The subscribers of bench/events.ts, in a process of their own (their reading must not hold up the bench's own
 * requests): `bun bench/events-subscribers.ts URL N` opens N raw-socket streams of `GET /api/v1/events`, prints
 * `ready` once each has its `ready` event, then for each event whose artist is named `fanout-K` that every stream has
 * received, `K FIRST MEDIAN LAST` (arrival times, ms since the epoch, to the microsecond). Exits when stdin closes.
 */

const [url = '', n = '1000'] = process.argv.slice(2)
const count = Number(n)
const { hostname, port } = new URL(url)
const clock = () => performance.timeOrigin + performance.now()
const arrivals = new Map<number, number[]>()
const sockets: { end(): void }[] = []
let ready = 0
const decoder = new TextDecoder()

for (let i = 0; i < count; i++) {
  let seenReady = false
  // Bun's own sockets: their callbacks cost the reading process less than node:net's streams.
  const socket = await Bun.connect({
    hostname,
    port: Number(port),
    socket: {
      data(_, bytes) {
        const now = clock()
        const text = decoder.decode(bytes)
        if (!seenReady && text.includes('event: ready')) {
          seenReady = true
          if (++ready === count) console.log('ready')
        }
        for (const match of text.matchAll(/"name":"fanout-(\d+)"/g)) {
          const k = Number(match[1])
          const times = arrivals.get(k) ?? []
          times.push(now)
          arrivals.set(k, times)
          if (times.length === count) {
            const sorted = times.toSorted((a, b) => a - b)
            console.log(`${k} ${sorted[0]} ${sorted[Math.floor(count / 2)]} ${sorted[count - 1]}`)
            arrivals.delete(k)
          }
        }
      },
      error() {},
    },
  })
  socket.write(`GET /api/v1/events HTTP/1.1\r\nHost: ${hostname}\r\n\r\n`)
  sockets.push(socket)
  if (i % 100 === 99) await Bun.sleep(20)
}

// Ends with the bench: stdin closes when the parent goes.
for await (const _ of Bun.stdin.stream());
for (const socket of sockets) socket.end()
process.exit(0)

export {}
