/** The API's entry points, as `/` answers them when the pages are off (`--no-ui`). */
export const API_INDEX = {
  name: 'rock-legends',
  api: '/api/v1',
  artists: '/api/v1/artists',
  docs: '/docs',
  openapi: '/openapi.json',
  health: '/healthz',
} as const

/**
 * What the executable prints once it serves: the first line is the one scripts and test fixtures wait for, exactly
 * `rock-legends listening on URL`; the lines after it are the addresses a person opens.
 */
export function readyLines(url: string, ui: boolean): string {
  const lines = [`rock-legends listening on ${url}`]
  if (ui) lines.push(`  catalogue  ${url}/`)
  lines.push(`  API docs   ${url}/docs`, `  API        ${url}/api/v1/artists`)
  return lines.join('\n')
}
