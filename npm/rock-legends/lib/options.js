// Generated from src/options.ts by `bun scripts/npm-options.ts`: edit the table there, then run it.

/**
 * How startServer passes each option to the executable (see argumentsFor in server.js): `form` says how a value is
 * written, and `embedded` is the value passed when the option is not given, where the executable's own default suits
 * a service rather than a fixture.
 */
export const OPTIONS = [
  { key: 'port', flag: '--port', form: 'value', embedded: 0 },
  { key: 'host', flag: '--host', form: 'value' },
  { key: 'data', flag: '--data', form: 'value', embedded: ':memory:' },
  { key: 'dbPool', flag: '--db-pool', form: 'value' },
  { key: 'dbWaitMs', flag: '--db-wait', form: 'ms' },
  { key: 'dataDirect', flag: '--data-direct', form: 'value' },
  { key: 'seed', flag: '--seed', form: 'seed' },
  { key: 'allowNewData', flag: '--allow-new-data', form: 'on' },
  { key: 'takeover', flag: '--takeover', form: 'on' },
  { key: 'tlsCert', flag: '--tls-cert', form: 'value' },
  { key: 'tlsKey', flag: '--tls-key', form: 'value' },
  { key: 'hstsMs', flag: '--hsts', form: 'ms' },
  { key: 'httpsDomains', flag: '--https', form: 'list' },
  { key: 'acmeDirectory', flag: '--acme-directory', form: 'value' },
  { key: 'acmeEmail', flag: '--acme-email', form: 'value' },
  { key: 'acmeDir', flag: '--acme-dir', form: 'value' },
  { key: 'httpPort', flag: '--http-port', form: 'value' },
  { key: 'apiKeys', flag: '--api-key', form: 'each' },
  { key: 'trustProxy', flag: '--trust-proxy', form: 'list' },
  { key: 'tokenTtlMs', flag: '--token-ttl', form: 'ms' },
  { key: 'log', flag: '--log', form: 'value', embedded: 'off' },
  { key: 'logLevel', flag: '--log-level', form: 'value' },
  { key: 'cors', flag: '--cors', form: 'list' },
  { key: 'delay', flag: '--delay', form: 'value' },
  { key: 'readOnly', flag: '--read-only', form: 'on' },
  { key: 'allowReset', flag: '--allow-reset', form: 'on' },
  { key: 'fixtures', flag: '--fixtures', form: 'on' },
  { key: 'fixturesNamespaces', flag: '--fixtures-namespaces', form: 'value' },
  { key: 'fixturesMemory', flag: '--fixtures-memory', form: 'value' },
  { key: 'ui', flag: '--no-ui', form: 'off' },
  { key: 'signup', flag: '--no-signup', form: 'off' },
  { key: 'metrics', flag: '--metrics', form: 'value' },
  { key: 'backupEveryMs', flag: '--backup-every', form: 'ms' },
  { key: 'backupDir', flag: '--backup-dir', form: 'value' },
  { key: 'backupKeep', flag: '--backup-keep', form: 'value' },
  { key: 'compactAfterBytes', env: 'ROCK_LEGENDS_COMPACT_AFTER', form: 'env' },
]
