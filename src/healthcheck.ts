/** How long `rock-legends healthcheck` waits for an answer: a healthy server answers in milliseconds. */
export const HEALTHCHECK_TIMEOUT_MS = 3000

/** What a health check found. */
export interface Health {
  healthy: boolean
  /** The URL asked and what it answered, or why it could not be asked. */
  detail: string
}

/** The `/healthz` address of a server given by its base URL (a URL that already ends in `/healthz` is kept). */
export function healthzUrl(base: string): string {
  const url = new URL(base)
  if (!url.pathname.endsWith('/healthz')) url.pathname = `${url.pathname.replace(/\/+$/, '')}/healthz`
  return url.href
}

/** Whether `url` is https:// to a loopback address or `localhost`. */
function onLoopback(url: string): boolean {
  const { protocol, hostname } = new URL(url)
  return (
    protocol === 'https:' && (hostname === 'localhost' || hostname === '[::1]' || /^127\.\d+\.\d+\.\d+$/.test(hostname))
  )
}

/**
 * Asks a running server whether it is healthy: `GET /healthz` must answer 200 `{"status":"ok"}` within the timeout.
 * Never throws, so the command line can turn the answer into an exit code; this is what container images without
 * curl run as their HEALTHCHECK.
 *
 * @example
 * const { healthy } = await checkHealth('http://127.0.0.1:3000')
 */
export async function checkHealth(base: string, timeoutMs = HEALTHCHECK_TIMEOUT_MS): Promise<Health> {
  const url = healthzUrl(base)
  try {
    const response = await fetch(url, {
      signal: AbortSignal.timeout(timeoutMs),
      redirect: 'manual',
      // The certificate names the public host, not the loopback address a container or unit asks its own server on;
      // and on loopback no one but this machine's root could answer in its place. Elsewhere it is checked.
      ...(onLoopback(url) && { tls: { rejectUnauthorized: false } }),
    })
    const text = await response.text()
    let status: unknown
    try {
      status = (JSON.parse(text) as { status?: unknown }).status
    } catch {
      status = undefined
    }
    if (response.status === 200 && status === 'ok') return { healthy: true, detail: `${url} answered 200 ok` }
    return { healthy: false, detail: `${url} answered ${response.status}: ${text.slice(0, 200)}` }
  } catch (error) {
    const reason =
      (error as Error).name === 'TimeoutError' ? `no answer within ${timeoutMs} ms` : (error as Error).message
    return { healthy: false, detail: `${url}: ${reason}` }
  }
}
