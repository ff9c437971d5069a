// Enhances the pages the server renders: signs up, logs in and out, and sends the write forms to the API with the
// user's bearer token, showing each problem the API answers beside its field. Without it the pages still browse and
// search. The token lives in sessionStorage: it goes when the tab closes, and the page never sees a service key.

const SESSION = 'rock-legends.session'

/** The signed-in user and their token, or null once logged out or expired. */
function readSession() {
  try {
    const session = JSON.parse(sessionStorage.getItem(SESSION) ?? 'null')
    if (session && typeof session.token === 'string' && Date.parse(session.expiresAt) > Date.now()) return session
    sessionStorage.removeItem(SESSION)
  } catch {
    // Storage refused (a privacy mode): the user simply is not signed in.
  }
  return null
}

function saveSession(login) {
  const session = { token: login.token, expiresAt: login.expires_at, name: login.user.name }
  try {
    sessionStorage.setItem(SESSION, JSON.stringify(session))
  } catch {
    // Without storage the session lasts for this page only.
  }
  return session
}

function forgetSession() {
  try {
    sessionStorage.removeItem(SESSION)
  } catch {}
}

/** Shows what a signed-in user (or a visitor) sees, and the forms only the script can send. */
function showSession(session) {
  for (const element of document.querySelectorAll('[data-signed-in]')) element.hidden = !session
  for (const element of document.querySelectorAll('[data-signed-out]')) element.hidden = Boolean(session)
  for (const element of document.querySelectorAll('[data-script]')) element.hidden = false
  for (const element of document.querySelectorAll('[data-user-name]')) element.textContent = session?.name ?? ''
}

/** Calls the API, with `more` headers; resolves with the status and the JSON answered (null when none). */
async function callApi(method, path, body, token, more = {}) {
  const headers = { accept: 'application/json', ...more }
  if (body !== undefined) headers['content-type'] = 'application/json'
  if (token) headers.authorization = `Bearer ${token}`
  const response = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) })
  const text = await response.text()
  let json = null
  try {
    json = text ? JSON.parse(text) : null
  } catch {
    json = null
  }
  return { ok: response.ok, status: response.status, json }
}

/** The JSON body of a form: empty optional fields are left out, and integer fields sent as numbers when they are. */
function bodyOf(form) {
  const body = {}
  for (const element of form.elements) {
    if (!element.name) continue
    const value = element.value
    if (value.trim() === '' && !element.required) continue
    body[element.name] = element.dataset.type === 'integer' && /^\s*[-+]?\d+\s*$/.test(value) ? Number(value) : value
  }
  return body
}

function clearProblems(form) {
  form.querySelector('[data-form-error]').replaceChildren()
  for (const slot of form.querySelectorAll('[data-error-for]')) slot.textContent = ''
  for (const element of form.querySelectorAll('[aria-invalid]')) element.removeAttribute('aria-invalid')
}

const sentence = (text) => (text ? text.charAt(0).toUpperCase() + text.slice(1) : text)

/**
 * Shows a problem the API answered: each `errors[]` entry beside the field its pointer names (`/year` → year), the
 * rest above the form, and moves the focus to the first field to fix.
 */
function showProblem(form, problem, extra) {
  const general = form.querySelector('[data-form-error]')
  const lines = []
  let first = null
  for (const error of problem?.errors ?? []) {
    const name = (error.pointer ?? '').split('/')[1] ?? ''
    const slot = name ? form.querySelector(`[data-error-for="${CSS.escape(name)}"]`) : null
    const field = name ? form.elements.namedItem(name) : null
    if (slot && field) {
      slot.textContent = sentence(error.detail)
      field.setAttribute('aria-invalid', 'true')
      first ??= field
    } else lines.push(`${error.pointer || error.parameter || ''} ${error.detail}`.trim())
  }
  const heading = document.createElement('p')
  heading.textContent = first
    ? `${problem.title}: see the field${lines.length > 0 || form.querySelectorAll('[aria-invalid]').length > 1 ? 's' : ''} marked below.`
    : problem
      ? `${problem.title}. ${problem.detail ?? ''}`.trim()
      : 'The server answered in a way this page does not understand. Try again.'
  general.replaceChildren(heading)
  for (const line of lines) {
    const item = document.createElement('p')
    item.textContent = sentence(line)
    general.append(item)
  }
  if (extra) general.append(extra)
  ;(first ?? general).focus?.()
}

function logInAgainLink() {
  const paragraph = document.createElement('p')
  const link = document.createElement('a')
  link.href = `/login?next=${encodeURIComponent(location.pathname + location.search)}`
  link.textContent = 'Log in again'
  paragraph.append(link, ' to save this.')
  return paragraph
}

/** Where to go after signing in: the page the user came from, on this server only. */
function nextPage(form) {
  const next = new URL(form.dataset.next ?? '/', location.origin)
  return next.origin === location.origin ? next.href : '/'
}

async function logIn(form, email, password) {
  const login = await callApi('POST', '/api/v1/user/login', { email, password })
  if (!login.ok) return showProblem(form, login.json)
  saveSession(login.json)
  location.assign(nextPage(form))
}

/** What follows a successful answer of the API to a form. */
async function follow(form, answer, body) {
  const after = form.dataset.after
  if (after === 'login') return logIn(form, body.email, body.password)
  if (after === 'next') {
    saveSession(answer.json)
    return location.assign(nextPage(form))
  }
  if (after === 'artist') return location.assign(`/artists/${answer.json.id}`)
  // The page again, showing what was saved (scrolled to it when the form names an anchor, `album` → #album-7).
  const anchor = form.dataset.anchor ? `#${form.dataset.anchor}-${answer.json.id}` : ''
  history.replaceState(null, '', location.pathname + location.search + anchor)
  location.reload()
}

async function send(form) {
  const [method, path] = form.dataset.api.split(' ')
  const session = form.hasAttribute('data-signed-in') ? readSession() : null
  const body = bodyOf(form)
  clearProblems(form)
  if (form.hasAttribute('data-signed-in') && !session)
    return sessionEnded(form, { title: 'You are not signed in', detail: 'Your session has ended.' })
  // The version the page was built from (or chosen since): a save over someone else's change is refused, not made.
  const condition = form.dataset.ifMatch ? { 'if-match': form.dataset.ifMatch } : {}
  const answer = await callApi(method, path, body, session?.token, condition)
  if (answer.ok) return follow(form, answer, body)
  if (answer.status === 401 && session) return sessionEnded(form, answer.json)
  if (answer.status === 412 && form.dataset.ifMatch) return showConflict(form, path, answer.json)
  showProblem(form, answer.json)
}

/**
 * Someone saved the record since this page was built: beside the form, what it holds now (and where that differs
 * from what was typed), and the choice of saving over it or taking it. Nothing typed is lost until the person chooses.
 */
async function showConflict(form, path, problem) {
  form.parentElement.querySelector('[data-conflict]')?.remove()
  let current = null
  let tag = null
  try {
    const response = await fetch(path, { cache: 'no-store', headers: { accept: 'application/json' } })
    if (response.ok) {
      current = await response.json()
      tag = response.headers.get('etag')
    }
  } catch {
    current = null
  }
  if (!current || !tag) return showProblem(form, problem)
  const panel = document.createElement('div')
  panel.className = 'conflict'
  panel.dataset.conflict = ''
  panel.setAttribute('role', 'alert')
  panel.tabIndex = -1
  const heading = document.createElement('p')
  heading.className = 'conflict-title'
  heading.textContent = 'Someone else changed this artist since you opened this page. Your changes are not saved yet.'
  const intro = document.createElement('p')
  intro.textContent = 'This is what it holds now:'
  const values = document.createElement('dl')
  for (const element of form.elements) {
    if (!element.name) continue
    const label = form.querySelector(`label[for="${CSS.escape(element.id)}"]`)
    const term = document.createElement('dt')
    term.textContent = label?.firstChild?.textContent?.trim() || element.name
    const now = current[element.name] === undefined ? '' : String(current[element.name])
    const value = document.createElement('dd')
    value.textContent = now === '' ? '(none)' : now
    if (now !== element.value.trim()) {
      const yours = document.createElement('span')
      yours.className = 'differs'
      yours.textContent = element.value.trim() === '' ? 'Yours: (none)' : `Yours: ${element.value.trim()}`
      value.append(yours)
    }
    values.append(term, value)
  }
  const mine = document.createElement('button')
  mine.type = 'button'
  mine.textContent = 'Save mine over theirs'
  mine.addEventListener('click', () => {
    // What is in the form now, over the version just shown; if that changes too, this panel comes back.
    form.dataset.ifMatch = tag
    panel.remove()
    form.requestSubmit()
  })
  const theirs = document.createElement('button')
  theirs.type = 'button'
  theirs.className = 'secondary'
  theirs.textContent = 'Use their version'
  theirs.addEventListener('click', () => {
    // The page again, built from what is stored now, back at this form.
    history.replaceState(null, '', `${location.pathname}${location.search}#${form.id}-title`)
    location.reload()
  })
  const actions = document.createElement('div')
  actions.className = 'conflict-actions'
  actions.append(mine, theirs)
  panel.append(heading, intro, values, actions)
  form.before(panel)
  panel.focus()
}

/** The token expired or was revoked elsewhere: the header says so, and this form stays, keeping what was typed. */
function sessionEnded(form, problem) {
  forgetSession()
  showSession(null)
  form.hidden = false
  showProblem(form, problem, logInAgainLink())
}

function enhanceForm(form) {
  form.addEventListener('submit', async (event) => {
    event.preventDefault()
    const button = form.querySelector('button[type="submit"]')
    if (button.disabled) return
    button.disabled = true
    form.setAttribute('aria-busy', 'true')
    try {
      await send(form)
    } catch {
      clearProblems(form)
      showProblem(form, {
        title: 'The server could not be reached',
        detail: 'Check that it is running, then try again.',
      })
    } finally {
      button.disabled = false
      form.removeAttribute('aria-busy')
    }
  })
}

async function logOut(button) {
  const session = readSession()
  button.disabled = true
  try {
    if (session) await callApi('POST', '/api/v1/user/logout', undefined, session.token)
  } catch {
    // Logged out here all the same: the token expires on its own.
  }
  forgetSession()
  showSession(null)
  button.disabled = false
  document.querySelector('[data-signed-out] a')?.focus()
}

showSession(readSession())
for (const form of document.querySelectorAll('form[data-api]')) enhanceForm(form)
for (const button of document.querySelectorAll('[data-log-out]')) button.addEventListener('click', () => logOut(button))
