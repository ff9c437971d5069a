import { type Html, html } from './html.ts'

/** One field of a form the script sends to the API as JSON, named after the body property it fills. */
export interface Field {
  name: string
  label: string
  type?: 'text' | 'email' | 'password' | 'url' | 'textarea' | 'year'
  required?: boolean
  value?: string | number
  hint?: string
  autocomplete?: string
}

/** What a form does: the API operation it calls, and what the page does once it succeeds. */
export interface FormSpec {
  /** Unique on the page; the fields' ids start with it. */
  id: string
  /** `POST /api/v1/artists`, say: the method and the path the script sends the body to. */
  api: string
  /**
   * After success: `artist` opens the artist answered; `reload` shows this page again, at `#anchor-id` when `anchor`
   * is set; `next` keeps the session answered (log-in) and `login` logs in with the body's email and password
   * (sign-up), both then going to `next`.
   */
  after: 'artist' | 'reload' | 'next' | 'login'
  anchor?: string
  /** Where `next` and `login` go: a path on this server. */
  next?: string
  /** Shown only to a signed-in user (writes); otherwise to anyone (sign-up, log-in). */
  signedIn: boolean
  submit: string
  fields: Field[]
  /**
   * The entity tag of what the form edits, as the page was built from it: the script sends it in `If-Match`, so that
   * a save over someone else's change is refused (412) and shown instead of overwriting it.
   */
  ifMatch?: string
}

function input(id: string, field: Field, describedBy: string): Html {
  const common = html`id="${id}" name="${field.name}" aria-describedby="${describedBy}"${field.required ? html` required` : ''}${field.autocomplete ? html` autocomplete="${field.autocomplete}"` : ''}`
  if (field.type === 'textarea') return html`<textarea ${common} rows="5">${field.value ?? ''}</textarea>`
  // A year goes to the API as a number; the API, not the browser, decides what is valid (the form has novalidate).
  if (field.type === 'year')
    return html`<input ${common} type="text" inputmode="numeric" data-type="integer" value="${field.value ?? ''}">`
  return html`<input ${common} type="${field.type ?? 'text'}" value="${field.value ?? ''}">`
}

function fieldHtml(formId: string, field: Field): Html {
  const id = `${formId}-${field.name}`
  const hintId = `${id}-hint`
  const errorId = `${id}-error`
  const describedBy = field.hint ? `${hintId} ${errorId}` : errorId
  return html`<div class="field">
<label for="${id}">${field.label}${field.required ? '' : html` <span class="optional">(optional)</span>`}</label>
${field.hint && html`<p class="hint" id="${hintId}">${field.hint}</p>`}
${input(id, field, describedBy)}
<p class="field-error" id="${errorId}" data-error-for="${field.name}"></p>
</div>`
}

/**
 * A form the page's script sends to the API, with a place beside each field for the problem the API reports on it
 * (`errors[].pointer`) and one above for the rest. Hidden until the script runs, as nothing else could send it.
 */
export function apiForm(spec: FormSpec): Html {
  return html`<form class="api-form" id="${spec.id}" data-api="${spec.api}" data-after="${spec.after}"${spec.anchor ? html` data-anchor="${spec.anchor}"` : ''}${spec.next ? html` data-next="${spec.next}"` : ''}${spec.ifMatch ? html` data-if-match="${spec.ifMatch}"` : ''}${spec.signedIn ? html` data-signed-in` : html` data-script`} novalidate hidden>
<div class="form-error" role="alert" tabindex="-1" data-form-error></div>
${spec.fields.map((field) => fieldHtml(spec.id, field))}
<button type="submit">${spec.submit}</button>
</form>`
}

/**
 * A section holding a write form under its heading: a signed-in user sees the form, anyone else a note with links
 * to log in or sign up and come back here.
 */
export function writeSection(title: string, spec: FormSpec, here: string, what: string): Html {
  const next = encodeURIComponent(here)
  return html`<section class="panel" aria-labelledby="${spec.id}-title">
<h2 id="${spec.id}-title">${title}</h2>
<p class="note" data-signed-out><a href="/login?next=${next}">Log in</a> or <a href="/signup?next=${next}">sign up</a> to ${what}.</p>
${apiForm(spec)}
</section>`
}

/** Said where a form needs the script and the browser runs none. */
export const NEEDS_SCRIPT = html`<noscript><p class="note">Signing in and editing need JavaScript; browsing and search work without it.</p></noscript>`
