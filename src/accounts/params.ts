import { t } from 'elysia'
import { IntegerParam } from '../http/integer-param.ts'

/** `id` in `/api/v1/user/api-keys/{id}`. */
export const ApiKeyIdParams = t.Object({
  id: IntegerParam({ minimum: 1, description: 'The id of the personal API key.' }),
})
