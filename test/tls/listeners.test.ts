import { afterAll, describe, expect, test } from 'bun:test'
import type { Server, TLSOptions } from 'bun'
import { Listeners } from '../../src/tls/listeners.ts'
import { removeDir, tempDir } from '../support/binary.ts'
import { keepConnection, makeCa, opensslMissing } from '../support/certificates.ts'

// The listeners of an HTTPS port, over real Bun servers: an old listener kept for its connections after a swap is
// stopped once its time is up, closing what stayed silent, as the idle timeout would have.

const dir = tempDir('rock-legends-listeners-')
afterAll(() => removeDir(dir))
const ca = makeCa(dir)

describe.skipIf(opensslMissing || process.platform !== 'linux')('Listeners', () => {
  test('an old listener is stopped once its connections have had the idle timeout to end', async () => {
    const pair = async (name: string) => {
      const leaf = ca.leaf(name)
      return { cert: await Bun.file(leaf.cert).text(), key: await Bun.file(leaf.key).text() }
    }
    const serve = async (port: number, name: string): Promise<Server<undefined>> =>
      Bun.serve({
        port,
        hostname: '127.0.0.1',
        reusePort: true,
        tls: await pair(name),
        fetch: () => new Response('ok'),
      })
    const first = await serve(0, 'listeners-first')
    const second = await pair('listeners-second')
    const listen = (tls: TLSOptions, port: number) =>
      Bun.serve({ port, hostname: '127.0.0.1', reusePort: true, tls, fetch: () => new Response('ok') })
    const closing = () => new Response('ok', { headers: { connection: 'close' } })
    const listeners = new Listeners(first, listen, closing, 600)
    const url = `https://127.0.0.1:${first.port}`
    const idle = await keepConnection(url, ca.pem)
    expect(await idle.get('/')).toStartWith('HTTP/1.1 200')
    const closed = idle.closed.then(() => performance.now())
    const swapped = performance.now()
    await listeners.swap(second)
    expect(listeners.pendingRequests).toBe(0)
    // Kept past the swap, then closed when the old listener stops, not before.
    const at = await closed
    expect(at - swapped).toBeGreaterThan(500)
    expect(at - swapped).toBeLessThan(2000)
    const fresh = await keepConnection(url, ca.pem)
    expect(await fresh.get('/')).toStartWith('HTTP/1.1 200')
    fresh.close()
    await listeners.stop()
  })
})
