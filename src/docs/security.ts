import type { Security } from './shapes.ts'

// OpenAPI security requirements for routes' `detail`. Alternatives are separate objects: either one will do.

/** A public operation: no credential. */
export const publicAccess: Security = []

/** An operation that takes either credential: a bearer token or an API key. */
export const anyCredential: Security = [{ bearerAuth: [] }, { apiKeyHeader: [] }]

/** An operation that takes a bearer token only. */
export const bearerToken: Security = [{ bearerAuth: [] }]
