import { apiForm, NEEDS_SCRIPT } from './forms.ts'
import { html } from './html.ts'
import { pageResponse } from './layout.ts'
import { localPath } from './query.ts'

const SIGNED_IN = html`<p class="note" data-signed-in hidden>You are signed in as <strong data-user-name></strong>. <a href="/">Browse the artists</a></p>`

/** `/login`: the form that exchanges an email and a password for a bearer token, kept for this tab only. */
export function loginPage(query: Record<string, unknown>, here: string): Response {
  const next = localPath(query.next)
  const main = html`<h1>Log in</h1>
<p>Logged in, you can add artists and albums and edit artists. You stay logged in until you log out or close this tab.</p>
${SIGNED_IN}
${NEEDS_SCRIPT}
${apiForm({
  id: 'login',
  api: 'POST /api/v1/user/login',
  after: 'next',
  next,
  signedIn: false,
  submit: 'Log in',
  fields: [
    { name: 'email', label: 'Email', type: 'email', required: true, autocomplete: 'username' },
    { name: 'password', label: 'Password', type: 'password', required: true, autocomplete: 'current-password' },
  ],
})}
<p>No account yet? <a href="/signup?next=${encodeURIComponent(next)}">Sign up</a></p>`
  return pageResponse({ title: 'Log in', main, here })
}

/** `/signup`: creates an account through the API, then logs in with it; or says that sign-up is closed. */
export function signupPage(query: Record<string, unknown>, here: string, open = true): Response {
  const next = localPath(query.next)
  if (!open)
    return pageResponse({
      title: 'Sign up',
      main: html`<h1>Sign up</h1>
<p>Sign-up is closed on this server: accounts are created by its operator. Anyone may browse without one.</p>
<p>Already have an account? <a href="/login?next=${encodeURIComponent(next)}">Log in</a></p>`,
      here,
    })
  const main = html`<h1>Sign up</h1>
<p>An account lets you add artists and albums and edit artists. Anyone may browse without one.</p>
${SIGNED_IN}
${NEEDS_SCRIPT}
${apiForm({
  id: 'signup',
  api: 'POST /api/v1/user/signup',
  after: 'login',
  next,
  signedIn: false,
  submit: 'Sign up',
  fields: [
    { name: 'name', label: 'Name', required: true, autocomplete: 'name' },
    { name: 'email', label: 'Email', type: 'email', required: true, autocomplete: 'email' },
    {
      name: 'password',
      label: 'Password',
      type: 'password',
      required: true,
      autocomplete: 'new-password',
      hint: 'At least 8 characters.',
    },
  ],
})}
<p>Already have an account? <a href="/login?next=${encodeURIComponent(next)}">Log in</a></p>`
  return pageResponse({ title: 'Sign up', main, here })
}
