/**
 * `n` as `n.toLocaleString('en')` writes it, `1,000` for 1000: written by hand for a whole number, as the first call
 * of `toLocaleString` loads the locale's number formatting (about 3 ms of CPU), which start-up would otherwise pay
 * to word the API's documentation. Anything else (a fraction, beyond 2^53, not finite, -0) is left to `toLocaleString`.
 */
export const withCommas = (n: number): string =>
  Number.isSafeInteger(n) && !Object.is(n, -0) ? String(n).replace(/\B(?=(\d{3})+$)/g, ',') : n.toLocaleString('en')
