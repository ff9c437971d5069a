/**
 * `bun bench/certificate-swap.ts [--swaps N] [--clients N]`: how many connections a certificate swap resets.
 *
 * The HTTPS port's listeners (src/tls/listeners.ts) swap certificates every 20 ms while `--clients` clients open TLS
 * connections one after the other without a pause, and keep-alive clients ask on one connection each (idle 100 ms
 * between requests). Prints the new connections made and reset, the keep-alive requests answered and failed, and
 * `net.ipv4.tcp_migrate_req`. Linux moves the connections queued on a closing listening socket to another listener
 * of the port only when it is 1; to compare, run it in a network namespace of its own with the setting changed:
 * `unshare -n sh -c 'ip link set lo up; sysctl -qw net.ipv4.tcp_migrate_req=1; bun bench/certificate-swap.ts'`.
 */
import { join } from 'node:path'
import { connect } from 'node:tls'
import type { Server } from 'bun'
import { migratesQueuedConnections } from '../src/ops/takeover.ts'
import { Listeners } from '../src/tls/listeners.ts'
import { removeDir, tempDir } from '../test/support/binary.ts'
import { keepConnection, makeCa } from '../test/support/certificates.ts'

const argument = (flag: string, fallback: number) => {
  const at = process.argv.indexOf(flag)
  return at > 0 ? Number(process.argv[at + 1]) : fallback
}
const SWAPS = argument('--swaps', 100)
const CLIENTS = argument('--clients', 3)
const KEPT = 4

const dir = tempDir('rock-legends-bench-swap-')
const ca = makeCa(dir, 'Swap CA')
const leaf = ca.leaf('swap')
const tls = { cert: await Bun.file(leaf.cert).text(), key: await Bun.file(leaf.key).text() }
const fetchHandler = () => new Response('ok')
const serve = (port: number): Server<undefined> =>
  Bun.serve({ port, hostname: '127.0.0.1', reusePort: true, idleTimeout: 30, tls, fetch: fetchHandler })
const first = serve(0)
const port = first.port as number
const closing = () => new Response('ok', { headers: { connection: 'close' } })
const listeners = new Listeners(first, (_, at) => serve(at), closing, 31_000)

const seen = { connections: 0, resets: 0, kept: 0, keptFailed: 0 }
let running = true
const opener = async () => {
  while (running)
    await new Promise<void>((resolve) => {
      const socket = connect({ host: '127.0.0.1', port, ca: ca.pem, servername: 'localhost' }, () => {
        seen.connections++
        socket.destroy()
        resolve()
      })
      socket.once('error', () => {
        seen.resets++
        resolve()
      })
    })
}
const keeper = async () => {
  while (running) {
    const connection = await keepConnection(`https://127.0.0.1:${port}`, ca.pem).catch(() => undefined)
    if (connection === undefined) {
      // Reset while it was being made: a new connection like the openers'.
      seen.resets++
      continue
    }
    for (let moved = false; running && !moved; await Bun.sleep(100)) {
      const answer = await connection.get('/').catch(() => undefined)
      if (answer === undefined) {
        seen.keptFailed++
        break
      }
      seen.kept++
      moved = /\r\nconnection: close/i.test(answer)
    }
    connection.close()
  }
}
const clients = [...Array.from({ length: CLIENTS }, opener), ...Array.from({ length: KEPT }, keeper)]
for (let swap = 0; swap < SWAPS; swap++) {
  await Bun.sleep(20)
  await listeners.swap(tls)
}
running = false
await Promise.all(clients)
await listeners.stop()
removeDir(join(dir))
console.log(
  `net.ipv4.tcp_migrate_req ${migratesQueuedConnections() ? 1 : 0}: ${SWAPS} swaps; ${seen.connections} new connections, ${seen.resets} reset; ${seen.kept} keep-alive requests answered, ${seen.keptFailed} failed`,
)
