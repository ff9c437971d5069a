/** The parts of a JSON schema (TypeBox's) that say what a value must be. */
export interface SchemaLike {
  type?: string
  anyOf?: SchemaLike[]
  minLength?: number
  maxLength?: number
  minimum?: number
  maximum?: number
  pattern?: string
  properties?: Record<string, unknown>
  /** A hand-written description of what the value must be, preferred over the generated one. */
  error?: string
}

const range = (low: number | undefined, high: number | undefined, unit = '') =>
  low !== undefined && high !== undefined
    ? ` of ${low}–${high}${unit}`
    : high !== undefined
      ? ` of at most ${high}${unit}`
      : low !== undefined
        ? ` of at least ${low}${unit}`
        : ''

/** What a value of `schema` must be, in words: "a string of 1–200 characters", "an integer from 1900 to 2027 or null". */
export function describeSchema(schema: SchemaLike): string {
  if (schema.error) return schema.error
  if (schema.anyOf) return schema.anyOf.map(describeSchema).join(' or ')
  switch (schema.type) {
    case 'string':
      return `a string${range(schema.minLength, schema.maxLength, ' characters')}`
    case 'integer':
    case 'number': {
      const noun = schema.type === 'integer' ? 'an integer' : 'a number'
      if (schema.minimum !== undefined && schema.maximum !== undefined)
        return `${noun} from ${schema.minimum} to ${schema.maximum}`
      if (schema.minimum !== undefined) return `${noun} of at least ${schema.minimum}`
      return noun
    }
    case 'null':
      return 'null'
    case 'object':
      return 'a JSON object'
    case 'array':
      return 'an array'
    default:
      return schema.type ? `of type ${schema.type}` : 'valid'
  }
}
