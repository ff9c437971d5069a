import { Type } from '@sinclair/typebox'
import { type TSchema, t } from 'elysia'
import type { Slice } from '../store/store.ts'
import { IntegerParam } from './integer-param.ts'

/** Items per page when the client does not say. */
export const DEFAULT_LIMIT = 10
/** The most items one page holds; larger limits are lowered to it. */
export const MAX_LIMIT = 100

/** Query schema of every list: `limit` (1…, capped at 100, default 10) and `offset` (≥ 0, default 0). */
export const PageQuery = t.Object({
  limit: t.Optional(
    IntegerParam({
      name: 'limit',
      minimum: 1,
      cap: MAX_LIMIT,
      description: `How many items to return: at least 1, default ${DEFAULT_LIMIT}; values above ${MAX_LIMIT} are lowered to ${MAX_LIMIT}.`,
    }),
  ),
  // Bounded by what a JSON number holds exactly, so that meta.offset always echoes the request.
  offset: t.Optional(
    IntegerParam({
      name: 'offset',
      minimum: 0,
      maximum: BigInt(Number.MAX_SAFE_INTEGER),
      description: 'How many items to skip, default 0.',
    }),
  ),
})

/** The list wrapper of `items`: `{ data, meta: { limit, offset, total, next } }`. */
export const Paginated = <S extends TSchema>(items: S) =>
  t.Object({
    data: t.Array(items),
    meta: t.Object({
      limit: Type.Integer({ description: 'The limit applied.' }),
      offset: Type.Integer({ description: 'The offset applied.' }),
      total: Type.Integer({ description: 'How many items the whole list holds.' }),
      next: t.Union([t.String(), t.Null()], {
        description: 'The path and query of the next page, or null on the last page.',
      }),
    }),
  })

/** The page a query asks for, with defaults filled in. */
export const pageOf = (query: { limit?: number; offset?: number }) => ({
  limit: query.limit ?? DEFAULT_LIMIT,
  offset: query.offset ?? 0,
})

/** Wraps one page of `path`'s list, linking the next page while there is one. */
export function paginate<T>(path: string, page: { limit: number; offset: number }, slice: Slice<T>) {
  const nextOffset = page.offset + page.limit
  return {
    data: slice.items as T[],
    meta: {
      limit: page.limit,
      offset: page.offset,
      total: slice.total,
      next: nextOffset < slice.total ? `${path}?limit=${page.limit}&offset=${nextOffset}` : null,
    },
  }
}
