import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'

/**
 * The proxies of docs/operations.md as Debian installs them, and the configurations that page documents, for tests
 * that load them or run them in front of the executable. Without the programs those tests skip and say so, except
 * under CI=true, where a missing program fails the run.
 */
export const PROGRAMS = { nginx: '/usr/sbin/nginx', haproxy: '/usr/sbin/haproxy', caddy: '/usr/bin/caddy' }

const missing = Object.values(PROGRAMS).filter((path) => !Bun.file(path).size)
if (missing.length > 0 && process.env.CI === 'true')
  throw new Error(
    `the proxy tests must run in CI, but ${missing.join(', ')} is missing (apt-get install nginx haproxy caddy)`,
  )
if (missing.length > 0)
  console.warn(
    `\n!!! SKIPPING the proxy tests: ${missing.join(', ')} is not installed (apt-get install nginx haproxy caddy)\n`,
  )
/** Whether the proxy tests skip: a program is missing on a contributor's machine. */
export const skipProxies = missing.length > 0

const DOCS = readFileSync(join(import.meta.dir, '../../docs/operations.md'), 'utf8')

/** The fenced blocks of docs/operations.md written in `language`, in order. */
export const blocks = (language: string) =>
  [...DOCS.matchAll(new RegExp(`^\`\`\`${language}\\n([\\s\\S]*?)^\`\`\`$`, 'gm'))].map((match) => match[1] as string)

/** Runs `command` to its end; its exit code and its output, stdout then stderr. */
export const run = (command: string[], env: Record<string, string> = {}) => {
  const result = Bun.spawnSync(command, { env: { ...process.env, ...env }, stderr: 'pipe', stdout: 'pipe' })
  return { code: result.exitCode, output: `${result.stdout.toString()}${result.stderr.toString()}` }
}

/** A self-signed certificate for api.example.com in `dir`: `cert.pem`, `key.pem`, and both in `haproxy.pem`. */
export function makeCertificate(dir: string): { cert: string; key: string } {
  const cert = join(dir, 'cert.pem')
  const key = join(dir, 'key.pem')
  const made = run([
    'openssl',
    'req',
    '-x509',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-days',
    '1',
    '-subj',
    '/CN=api.example.com',
    '-keyout',
    key,
    '-out',
    cert,
  ])
  if (made.code !== 0) throw new Error(`openssl failed: ${made.output}`)
  writeFileSync(join(dir, 'haproxy.pem'), readFileSync(cert, 'utf8') + readFileSync(key, 'utf8'))
  return { cert, key }
}

/** Where an nginx configuration runs: its directory (pid, logs, temp files) and certificate. */
export interface NginxPlace {
  dir: string
  cert: string
  key: string
}

/**
 * An nginx configuration around one of the docs' `server`/`upstream` snippets: its certificate, its `listen 443`
 * (now `address:listen`) and its upstream ports (`upstreams`, the docs' port to the test's) replaced.
 */
export function nginxConfig(
  { dir, cert, key }: NginxPlace,
  snippet: string,
  listen: number,
  upstreams: Record<string, number>,
  address = '127.0.0.1',
): string {
  let text = snippet
    .replaceAll('/etc/letsencrypt/live/api.example.com/fullchain.pem', cert)
    .replaceAll('/etc/letsencrypt/live/api.example.com/privkey.pem', key)
    .replace(/listen 443 /g, `listen ${address}:${listen} `)
  for (const [from, to] of Object.entries(upstreams)) text = text.replaceAll(`127.0.0.1:${from}`, `127.0.0.1:${to}`)
  const temp = (name: string) => `${name}_temp_path ${join(dir, `${name}-temp`)};`
  return `${process.getuid?.() === 0 ? 'user root;\n' : ''}pid ${join(dir, `nginx-${listen}.pid`)};
error_log ${join(dir, `nginx-${listen}.log`)} warn;
events {}
http {
    access_log off;
    ${['client_body', 'proxy', 'fastcgi', 'uwsgi', 'scgi'].map(temp).join('\n    ')}
${text}
}
`
}
