import { STORABLE } from './rules.ts'

// The characters that NFKC turns into "@" and ".": full-width (＠ ．), small (﹫ ﹒) and the one-dot leader (․).
const AT = '@\\uFF20\\uFE6B'
const DOT = '.\\uFF0E\\uFE52\\u2024'

/**
 * The syntax of an email address as typed: a local part, an at sign, then dot-separated labels, where the at sign
 * and the dots may be any of their look-alikes that {@link emailKey} folds. Every repeated class excludes the
 * character that ends it (an at sign, a dot, whitespace), so each character can be matched one way only: the check
 * is linear, with no catastrophic backtracking, even on the 1 MiB strings a hostile body may carry. Surrounding
 * whitespace is allowed because the service trims it. Like every text field, no U+0000 or unpaired surrogate
 * ({@link STORABLE}).
 */
export const EMAIL_PATTERN = `${STORABLE}\\s*[^\\s${AT}]+[${AT}][^\\s${AT}${DOT}]+(?:[${DOT}][^\\s${AT}${DOT}]+)+\\s*$`

// The same syntax once folded, where only the ASCII "@" and "." remain.
const FOLDED = /^[^\s@]+@[^\s@.]+(?:\.[^\s@.]+)+$/

/**
 * The form in which two addresses are compared: trimmed, NFKC-normalised, lower-cased, and normalised again (lower
 * case can undo a composition). Full-width (`ｃａｒｌｏｓ＠ｒｏｃｋ．com`), decomposed (`e` + U+0301 for `é`) and
 * upper-case forms of one address share it, so they name one account.
 *
 * @example
 * emailKey(' ＣＡＲＬＯＳ＠ｒｏｃｋ．com ') // 'carlos@rock.com'
 */
export const emailKey = (email: string): string => email.trim().normalize('NFKC').toLowerCase().normalize('NFKC').trim()

/** Whether a folded address (from {@link emailKey}) still has the syntax of one: NFKC can expand a character into a dot. */
export const isFoldedEmail = (key: string): boolean => FOLDED.test(key)
