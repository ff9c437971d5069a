/**
 * A bare `Bun.serve` answering every request with one recorded answer, over HTTPS with the certificate given, or over
 * plain HTTP without one: what serving these bytes costs Bun alone, for bench/https.ts.
 *
 * Usage: bun bench/bare-tls.ts ANSWER.json [CERT KEY]   (prints `bare listening on URL`)
 */
export {}

const [answerFile, cert, key] = process.argv.slice(2)
const { headers, body } = JSON.parse(await Bun.file(answerFile as string).text()) as {
  headers: Record<string, string>
  body: string
}
const bytes = Buffer.from(body, 'base64')
const server = Bun.serve({
  hostname: '127.0.0.1',
  port: 0,
  development: false,
  ...(cert && key && { tls: { cert: await Bun.file(cert).text(), key: await Bun.file(key).text() } }),
  fetch: () => new Response(bytes, { headers }),
})
console.log(`bare listening on ${server.url.href.replace(/\/$/, '')}`)
