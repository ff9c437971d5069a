import { Elysia, t } from 'elysia'
import { conditionsWithoutTags } from '../http/conditional.ts'
import { type ProblemKind, type ProblemType, problemTypes } from '../http/problem-types.ts'
import { SECURITY_HEADERS } from '../http/security-headers.ts'
import { sizedResponse } from '../http/sized-response.ts'
import { NotFoundError } from '../model/errors.ts'
import { type Html, html } from './html.ts'
import { pageResponse } from './layout.ts'

/** True when the client prefers HTML (a browser) to anything else (curl sends `*\/*`). */
export function prefersHtml(accept: string | null): boolean {
  let html = 0
  let other = 0
  for (const range of (accept ?? '').split(',')) {
    const [type = '', ...parameters] = range.split(';').map((part) => part.trim().toLowerCase())
    const q = Number(parameters.find((parameter) => parameter.startsWith('q='))?.slice(2) ?? '1')
    const weight = Number.isFinite(q) ? q : 0
    if (type === 'text/html' || type === 'application/xhtml+xml') html = Math.max(html, weight)
    else other = Math.max(other, type === '*/*' ? weight - 0.001 : weight)
  }
  return html > 0 && html >= other
}

/** An explanation as HTML: the API's names and headers between backticks become code. */
const explained = (text: string): Html[] =>
  text.split(/`([^`]*)`/).map((part, i) => (i % 2 === 1 ? html`<code>${part}</code>` : html`${part}`))

/** An explanation as plain text: the backticks go, the words stay. */
const plain = (text: string) => text.replaceAll('`', '')

function problemPage(kind: ProblemKind, type: ProblemType, here: string, ui: boolean): Response {
  const main = html`<p class="back"><a href="/docs">← API documentation</a></p>
<h1>${type.title}</h1>
<p class="status">HTTP status ${type.status} · <code>type: /problems/${kind}</code></p>
<p>${explained(type.explanation)}</p>
<p>Every error of this API is a problem document (<a href="https://www.rfc-editor.org/rfc/rfc9457">RFC 9457</a>) whose <code>type</code> is the address of a page like this one.</p>`
  const response = pageResponse({ title: type.title, main, here, ui })
  response.headers.set('vary', 'Accept')
  return response
}

/**
 * `GET /problems/{type}`: what a problem `type` means and what to do, as an HTML page for a browser and as plain text
 * for anything else (`curl`), chosen by the `Accept` header. An unknown type is a 404 problem.
 */
export const problemRoutes = (ui: boolean) => {
  const routes = new Elysia()
  return routes.onBeforeHandle(conditionsWithoutTags(() => routes.routes)).get(
    '/problems/:kind',
    ({ params: { kind }, request }) => {
      // Own keys only: `constructor` and `__proto__` are keys of every object, not problem types.
      if (!Object.hasOwn(problemTypes, kind)) throw new NotFoundError(`There is no problem type ${kind}.`)
      const type = problemTypes[kind as ProblemKind]
      if (prefersHtml(request.headers.get('accept')))
        return problemPage(kind as ProblemKind, type, `/problems/${kind}`, ui)
      return sizedResponse(`${type.title} (${type.status})\n\n${plain(type.explanation)}\n`, {
        headers: { 'content-type': 'text/plain; charset=utf-8', vary: 'Accept', ...SECURITY_HEADERS },
      })
    },
    { params: t.Object({ kind: t.String() }), detail: { hide: true } },
  )
}
