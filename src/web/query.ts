/** A query parameter as one string: the first when repeated, `undefined` when absent. */
export function queryText(value: unknown): string | undefined {
  if (Array.isArray(value)) return queryText(value[0])
  return typeof value === 'string' ? value : undefined
}

/** A positive page number from `?page=`; anything else is the first page. */
export function pageNumber(value: unknown): number {
  const text = queryText(value) ?? ''
  const page = /^[1-9][0-9]{0,8}$/.test(text) ? Number(text) : 1
  return page
}

const ORIGIN = 'http://this.server'

/** A path and query on this server to go back to after logging in; anything else is the home page. */
export function localPath(value: unknown): string {
  const text = queryText(value) ?? '/'
  // Parsed as a browser would: `//host`, `/\host` and `/<tab>/host` all lead to other machines.
  if (!text.startsWith('/') || !URL.canParse(text, ORIGIN)) return '/'
  const url = new URL(text, ORIGIN)
  // Dot segments are resolved first, so `/.//host` becomes `//host`: a path must not start with two slashes once
  // normalised (a backslash is a slash by then), or the page would hold a link to another machine.
  if (url.origin !== ORIGIN || url.pathname.startsWith('//')) return '/'
  return `${url.pathname}${url.search}${url.hash}`
}
