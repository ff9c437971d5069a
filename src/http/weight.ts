// A weight (RFC 9110, 12.4.2): 0 to 1, with three decimals at most.
const WEIGHT = /^(?:0(?:\.\d{0,3})?|1(?:\.0{0,3})?)$/

/**
 * The weight a member of `Accept` or `Accept-Encoding` gives its range or coding, from its parameters (what follows
 * each `;`): its `q`, 1 without one, 0 when malformed (a client that cannot spell a weight does not get to prefer).
 */
export function weightOf(parameters: readonly string[]): number {
  let weight = 1
  for (const parameter of parameters) {
    const equals = parameter.indexOf('=')
    if (equals < 0 || parameter.slice(0, equals).trim().toLowerCase() !== 'q') continue
    const value = parameter.slice(equals + 1).trim()
    weight = WEIGHT.test(value) ? Number(value) : 0
  }
  return weight
}
