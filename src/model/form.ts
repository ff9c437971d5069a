/**
 * The forms one resource model takes. A model declares each field once (its type and description, as served) and,
 * apart, the rules a client's value must follow; the response, the request body, the seed file and the data file all
 * derive from those two tables, so a field is never declared twice.
 */
import { type TNull, type TOptional, type TProperties, type TSchema, type TUnion, Type } from '@sinclair/typebox'

/** Extra keywords a request adds to a field: bounds, patterns, and `error`, the wording of a refusal. */
export type Rules = Record<string, unknown> & { error?: string }

/** The served form of `F`: the `R` fields required, the others optional (left out when unset, never null). */
export type Served<F extends TProperties, R extends keyof F> = {
  [K in keyof F]: K extends R ? F[K] : TOptional<F[K]>
}

/** The accepted form of `F`: the `R` fields required, the others optional or null (null means unset). */
export type Accepted<F extends TProperties, R extends keyof F> = {
  [K in keyof F]: K extends R ? F[K] : TOptional<TUnion<[F[K], TNull]>>
}

/** The stored form of `F`, as data files hold it: optional fields may also be null, as 0.1 builds wrote them (upgrade.ts). */
export type Stored<F extends TProperties, R extends keyof F> = Accepted<F, R>

const withRules = (field: TSchema, rules: Rules | undefined): TSchema => (rules ? { ...field, ...rules } : field)

function build<F extends TProperties>(
  fields: F,
  required: readonly (keyof F)[],
  each: (field: TSchema, key: keyof F) => TSchema,
  optional: (field: TSchema, key: keyof F) => TSchema,
): TProperties {
  const properties: TProperties = {}
  for (const key of Object.keys(fields) as (keyof F & string)[]) {
    const field = each(fields[key] as TSchema, key)
    properties[key] = required.includes(key) ? field : Type.Optional(optional(field, key))
  }
  return properties
}

/** The properties of a response: as declared, unset optional fields left out. */
export function servedProperties<F extends TProperties, const R extends keyof F>(fields: F, required: readonly R[]) {
  return build(
    fields,
    required,
    (field) => field,
    (field) => field,
  ) as Served<F, R>
}

/**
 * The properties of a request body: each field with its rules; an optional field may also be null, which means the
 * same as leaving it out. The union carries the field's description, so the documentation shows it once.
 */
export function acceptedProperties<F extends TProperties, const R extends keyof F>(
  fields: F,
  rules: { [K in keyof F]?: Rules },
  required: readonly R[],
) {
  return build(
    fields,
    required,
    (field, key) => withRules(field, rules[key]),
    (field) => {
      const { description, error } = field as { description?: string; error?: string }
      return Type.Union([field, Type.Null()], {
        ...(description && { description: `${description} Null is the same as leaving it out.` }),
        ...(error && { error: `${error}, or null` }),
      })
    },
  ) as Accepted<F, R>
}

/**
 * The properties of a record in a data file: the types as served, where optional fields may also be null, each held
 * to `rules`, those a client's value follows (but for what changes with time, such as the latest year), so that a
 * backup or data file holds nothing the API would refuse.
 */
export function storedProperties<F extends TProperties, const R extends keyof F>(
  fields: F,
  rules: { [K in keyof F]?: Rules },
  required: readonly R[],
) {
  return build(
    fields,
    required,
    (field, key) => withRules(field, rules[key]),
    (field) => Type.Union([field, Type.Null()]),
  ) as Stored<F, R>
}

/**
 * The properties of a merge patch (RFC 7396) of a record: every field optional and held to its rules; an optional
 * field may also be null, which removes it. A required field cannot be null: the record would lose it.
 */
export function patchProperties<F extends TProperties>(
  fields: F,
  rules: { [K in keyof F]?: Rules },
  required: readonly (keyof F)[],
): TProperties {
  return build(
    fields,
    [],
    (field, key) => withRules(field, rules[key]),
    (field, key) => {
      if (required.includes(key)) return field
      const { description, error } = field as { description?: string; error?: string }
      return Type.Union([field, Type.Null()], {
        ...(description && { description: `${description} Null removes it; left out, it stays as it is.` }),
        ...(error && { error: `${error}, or null` }),
      })
    },
  )
}

/**
 * `current` with the merge patch `patch` applied (RFC 7396, for records whose fields are all plain values): a field
 * of the patch replaces the record's, a null removes it, a field left out stays; `id` is not a field here.
 */
export function mergePatch<T extends object>(current: T, patch: Record<string, unknown>): Record<string, unknown> {
  const merged: Record<string, unknown> = { ...(current as Record<string, unknown>) }
  for (const [key, value] of Object.entries(patch)) {
    if (key === 'id' || value === undefined) continue
    if (value === null) delete merged[key]
    else merged[key] = value
  }
  return merged
}

/** The fields of a new record: all but the id, which the store assigns itself. */
export type New<T> = Omit<T, 'id'>
