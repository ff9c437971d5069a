import { openapi } from '@elysiajs/openapi'
import pkg from '../../package.json' with { type: 'json' }

/** The OpenAPI 3.1 document at `/openapi.json`, generated from the routes' schemas. */
export const openapiDocument = () =>
  openapi({
    path: '/docs',
    specPath: '/openapi.json',
    provider: null,
    exclude: { paths: ['/openapi.json', '/docs', /^\/problems/, '/healthz'] },
    documentation: {
      info: {
        title: 'Rock Legends',
        version: pkg.version,
        description: 'A catalogue of legendary Argentine rock artists and their albums.',
      },
      servers: [{ url: '/', description: 'This server' }],
      tags: [
        { name: 'Artists', description: 'The legends themselves.' },
        { name: 'Albums', description: 'What they recorded.' },
        { name: 'Accounts', description: 'Sign-up, login, tokens and personal API keys.' },
      ],
      components: {
        securitySchemes: {
          bearerAuth: { type: 'http', scheme: 'bearer', description: 'A token from POST /api/v1/user/login.' },
          apiKeyHeader: { type: 'apiKey', in: 'header', name: 'X-API-Key', description: 'A service or personal key.' },
        },
      },
    },
  })
