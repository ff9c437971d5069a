/** The API's entry points, as `/` answers them when the pages are off (`--no-ui`). */
export const API_INDEX = {
  name: 'rock-legends',
  api: '/api/v1',
  artists: '/api/v1/artists',
  docs: '/docs',
  openapi: '/openapi.json',
  health: '/healthz',
} as const
