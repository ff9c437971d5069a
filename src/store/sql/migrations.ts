/**
 * The numbered migrations of the SQL schema, applied in order by `migrate` (migrate.ts), each exactly once, by
 * whichever replica holds the schema lease.
 *
 * RULES, so that the same schema and queries serve PostgreSQL 13+ and CockroachDB (test/store/sql/migrate.test.ts
 * checks the mechanical ones):
 * 1. No advisory locks: the schema lease is a row (`rl_schema`), taken with an UPDATE … WHERE that only one
 *    replica can win.
 * 2. No LISTEN/NOTIFY: replicas read what they need from the tables.
 * 3. Ids come from plain sequences (`CREATE SEQUENCE`, `nextval`, `setval`: CockroachDB has them too, as
 *    non-transactional as PostgreSQL's), never SERIAL or IDENTITY columns: a `nextval` locks nothing until its
 *    transaction ends, so replicas inserting at once never wait for each other's commits.
 * 4. No triggers and no stored functions: all logic is in the service.
 * 5. ON CONFLICT names plain columns, never an expression: a normalised value (an email's key) has its own column
 *    with a unique index.
 * 6. Every transaction runs through `inTransaction` (retry.ts), retried with backoff on 40001.
 * 7. Nothing relies on `CREATE … IF NOT EXISTS` being race-free (it is not): DDL runs only under the lease, where
 *    IF NOT EXISTS just lets a migration that died half-way run again. The one table made outside the lease,
 *    `rl_schema` itself, tolerates a concurrent creator (42P07, 23505 or 42710).
 * 8. Plain types only: BIGINT, INT, TEXT, BYTEA, TIMESTAMPTZ; CHECK constraints instead of enum types.
 * 9. One statement per string, no DDL and DML mixed on one table in one statement list: CockroachDB runs schema
 *    changes apart from the transaction's other writes.
 * A migration, once released, is never edited: a change is a new migration with the next number.
 */

/** One step of the schema. */
export interface Migration {
  version: number
  name: string
  statements: readonly string[]
}

/** Every migration, in order; the schema's version is the last one applied. */
export const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: 'catalogue and accounts',
    statements: [
      `CREATE TABLE IF NOT EXISTS rl_migrations (
        version INT PRIMARY KEY,
        name TEXT NOT NULL,
        applied_by TEXT NOT NULL,
        applied_at TIMESTAMPTZ NOT NULL DEFAULT now()
      )`,
      // The last id of each collection (`artists`, `albums`, `users`, `credentials`) and the size of the artist list
      // (`artists.count`), kept in the transaction of every write: `meta.total` reads a row, never count(*). Their
      // rows are put by every replica as it opens (INSERT … ON CONFLICT DO NOTHING, sql-store.ts), not here: rule 9.
      `CREATE TABLE IF NOT EXISTS rl_counters (
        name TEXT PRIMARY KEY,
        value BIGINT NOT NULL
      )`,
      // name_key: the name's order key (`nameKey`) in UTF-16BE, whose byte order is JavaScript's (rows.ts says why).
      // folded_*: the name and band as a search compares them (`searchable`). album_count: `meta.total` of the artist's
      // albums, kept by every album insert.
      `CREATE TABLE IF NOT EXISTS rl_artists (
        id BIGINT PRIMARY KEY,
        name TEXT NOT NULL,
        description TEXT,
        image TEXT,
        band TEXT,
        name_key BYTEA NOT NULL,
        folded_name TEXT NOT NULL,
        folded_band TEXT NOT NULL,
        album_count BIGINT NOT NULL
      )`,
      'CREATE INDEX IF NOT EXISTS rl_artists_by_name ON rl_artists (name_key, id)',
      `CREATE TABLE IF NOT EXISTS rl_albums (
        id BIGINT PRIMARY KEY,
        artist_id BIGINT NOT NULL REFERENCES rl_artists (id),
        name TEXT NOT NULL,
        year INT,
        image TEXT,
        name_key BYTEA NOT NULL,
        folded_name TEXT NOT NULL
      )`,
      'CREATE INDEX IF NOT EXISTS rl_albums_by_artist ON rl_albums (artist_id, id)',
      `CREATE TABLE IF NOT EXISTS rl_users (
        id BIGINT PRIMARY KEY,
        name TEXT NOT NULL,
        email TEXT NOT NULL,
        email_key TEXT NOT NULL,
        password_hash TEXT NOT NULL,
        created_at TEXT NOT NULL
      )`,
      'CREATE UNIQUE INDEX IF NOT EXISTS rl_users_email_key ON rl_users (email_key)',
      `CREATE TABLE IF NOT EXISTS rl_credentials (
        id BIGINT PRIMARY KEY,
        user_id BIGINT NOT NULL REFERENCES rl_users (id),
        kind TEXT NOT NULL CHECK (kind IN ('token', 'key')),
        name TEXT,
        hash TEXT NOT NULL,
        prefix TEXT NOT NULL,
        created_at TEXT NOT NULL,
        expires_at TEXT,
        last_used_at TEXT,
        revoked_at TEXT,
        expires_ms BIGINT
      )`,
      'CREATE UNIQUE INDEX IF NOT EXISTS rl_credentials_hash ON rl_credentials (hash)',
      'CREATE INDEX IF NOT EXISTS rl_credentials_by_user ON rl_credentials (user_id, id)',
      // The rate limits' attempts, shared by every replica (limiter.ts): one row per attempt of a key (`subject`) of
      // a limiter, at_ms by the app's clock, settled 0 while in flight; and per key one head row (id '') whose lock
      // makes the hits of that key take turns. By (limiter, at_ms) the sweep finds the rows that left the window.
      `CREATE TABLE IF NOT EXISTS rl_attempts (
        limiter TEXT NOT NULL,
        subject TEXT NOT NULL,
        id TEXT NOT NULL,
        at_ms BIGINT NOT NULL,
        settled INT NOT NULL CHECK (settled IN (0, 1)),
        PRIMARY KEY (limiter, subject, id)
      )`,
      'CREATE INDEX IF NOT EXISTS rl_attempts_by_age ON rl_attempts (limiter, at_ms)',
      // The start-up state that `POST /__admin/reset` restores, one JSON document, shared by every replica.
      `CREATE TABLE IF NOT EXISTS rl_snapshots (
        name TEXT PRIMARY KEY,
        document TEXT NOT NULL
      )`,
    ],
  },
  {
    version: 2,
    name: 'accounts the operator can disable',
    statements: [
      // When the operator disabled the account (`rock-legends users disable`), or NULL. IF NOT EXISTS lets the
      // migration run again after a replica died half-way (rule 7); every existing account stays enabled.
      'ALTER TABLE rl_users ADD COLUMN IF NOT EXISTS disabled_at TEXT',
    ],
  },
  {
    version: 3,
    name: 'a version of the artists, for cached list pages',
    statements: [
      // `artists.version` moves on in the transaction of every write to the artists (page-cache.ts): a replica
      // keeps the list pages it read and asks only this row whether they still hold. Replicas of builds before
      // this migration do not move it: stop them before starting this build's (docs/operations.md, Running several replicas).
      "INSERT INTO rl_counters (name, value) VALUES ('artists.version', 0) ON CONFLICT (name) DO NOTHING",
    ],
  },
  {
    version: 4,
    name: 'credentials epochs',
    statements: [
      // The account's credentials epoch (`User.credentialsEpoch`), moved on by a password reset in the transaction
      // that revokes its tokens; a credential is inserted only while its account is still at the epoch it carries
      // (credentials.ts). Existing rows start at 0, as a data file written before the field reads. Replicas of builds
      // before this migration do not move it on: stop them before starting this build's.
      'ALTER TABLE rl_users ADD COLUMN IF NOT EXISTS credentials_epoch BIGINT NOT NULL DEFAULT 0',
      // The epoch of its account that a credential was issued under (`Credential.epoch`).
      'ALTER TABLE rl_credentials ADD COLUMN IF NOT EXISTS epoch BIGINT NOT NULL DEFAULT 0',
    ],
  },
  {
    version: 5,
    name: 'ids from sequences, the artists tallied in stripes',
    statements: [
      // One sequence per collection, replacing the id counters of `rl_counters`: every batch of creates updates
      // those rows and holds their locks until its commit is flushed, so the batches of all replicas would queue
      // behind one another. Migration 6 starts each past the counter it replaces.
      'CREATE SEQUENCE IF NOT EXISTS rl_artist_ids',
      'CREATE SEQUENCE IF NOT EXISTS rl_album_ids',
      'CREATE SEQUENCE IF NOT EXISTS rl_user_ids',
      'CREATE SEQUENCE IF NOT EXISTS rl_credential_ids',
      // `meta.total` of the artist list (`count`) and the artists' version for cached list pages (`version`,
      // page-cache.ts), spread over a few rows (`stripe`) that reads add up: a write adds to one stripe that no other
      // transaction holds (writes.ts), so writers on several replicas do not wait for each other's commits, and the
      // sums stay exact, read in one snapshot. Its rows are put by every replica as it opens (sql-store.ts): rule 9.
      `CREATE TABLE IF NOT EXISTS rl_tallies (
        name TEXT NOT NULL,
        stripe INT NOT NULL,
        count BIGINT NOT NULL,
        version BIGINT NOT NULL,
        PRIMARY KEY (name, stripe)
      )`,
    ],
  },
  {
    version: 6,
    name: 'the counters moved to the sequences and the tallies',
    statements: [
      // Each sequence starts past the highest of its old counter, the highest id in its table (a row put by hand)
      // and its own value: the next record gets the id it would have had before, and a migration that died half-way
      // and runs again never moves a sequence back. Replicas of earlier builds, which still take ids from
      // `rl_counters`, must be stopped before this build starts (docs/operations.md, Running several replicas).
      ...(
        [
          ['rl_artist_ids', 'artists', 'rl_artists'],
          ['rl_album_ids', 'albums', 'rl_albums'],
          ['rl_user_ids', 'users', 'rl_users'],
          ['rl_credential_ids', 'credentials', 'rl_credentials'],
        ] as const
      ).map(
        ([sequence, counter, table]) => `SELECT setval('${sequence}', GREATEST(
          (SELECT COALESCE(max(value), 0) FROM rl_counters WHERE name = '${counter}'),
          (SELECT COALESCE(max(id), 0) FROM ${table}),
          (SELECT CASE WHEN is_called THEN last_value ELSE last_value - 1 END FROM ${sequence})
        ) + 1, false)`,
      ),
      // The artists' size and version as they were, into stripe 0.
      `INSERT INTO rl_tallies (name, stripe, count, version)
        SELECT 'artists', 0, c.value, v.value FROM rl_counters AS c, rl_counters AS v
        WHERE c.name = 'artists.count' AND v.name = 'artists.version'
        ON CONFLICT (name, stripe) DO NOTHING`,
      // Gone, so that a replica of an earlier build still running fails its writes loudly (its counter is missing)
      // instead of giving ids twice. `rl_counters` stays, empty, for the earlier migrations' sake.
      `DELETE FROM rl_counters
        WHERE name IN ('artists', 'albums', 'users', 'credentials', 'artists.count', 'artists.version')`,
    ],
  },
  {
    version: 7,
    name: 'the changes, for the event stream',
    statements: [
      // Ids of the changes, the event ids every replica gives its streams: a sequence, so writers take them without
      // waiting for each other (rule 3). Several changes of one transaction may take ids out of order with others'.
      'CREATE SEQUENCE IF NOT EXISTS rl_event_ids',
      // Every change of the catalogue (sql/changes.ts), written in the transaction of the change itself: `tx` is the
      // transaction's id (`pg_current_xact_id`), which gives the one order every replica reads them in (by tx, then
      // id, once every transaction below it has ended); `record_id` and `fields` (the record's JSON without its id)
      // are what the stream sends; `at_ms` dates it for the window. Pruned to the window by the replicas.
      `CREATE TABLE IF NOT EXISTS rl_events (
        id BIGINT PRIMARY KEY,
        tx BIGINT NOT NULL,
        at_ms BIGINT NOT NULL,
        kind TEXT NOT NULL CHECK (kind IN ('artist-created', 'artist-updated', 'album-created', 'reset')),
        record_id BIGINT,
        fields TEXT
      )`,
      'CREATE INDEX IF NOT EXISTS rl_events_in_order ON rl_events (tx, id)',
    ],
  },
  {
    version: 8,
    name: 'idempotency keys',
    statements: [
      // One row per `Idempotency-Key` of a scope (a credential), sql/idempotency.ts: taken by an INSERT … ON CONFLICT
      // that one request wins on whichever replica; `claim` is the running request's until it is answered (then
      // NULL, with the answer in `status`, `headers`, `body`); `until_ms` ends the claim's lease, then the answer's
      // life. `bytes` is what the row counts against the bounds.
      `CREATE TABLE IF NOT EXISTS rl_idempotency (
        scope TEXT NOT NULL,
        key TEXT NOT NULL,
        fingerprint TEXT NOT NULL,
        claim TEXT,
        until_ms BIGINT NOT NULL,
        bytes BIGINT NOT NULL,
        status INT,
        headers TEXT,
        body TEXT,
        PRIMARY KEY (scope, key)
      )`,
      'CREATE INDEX IF NOT EXISTS rl_idempotency_until ON rl_idempotency (until_ms)',
    ],
  },
  {
    version: 9,
    name: 'the changes of albums replaced and removed',
    statements: [
      // The CHECK of migration 7, under the name each database gave it (PostgreSQL, CockroachDB), replaced by one
      // that takes the new kinds. Dropped IF EXISTS, so that a migration that died half-way runs again. Replicas of
      // earlier builds must be stopped first: they would read an album's change as an artist's.
      'ALTER TABLE rl_events DROP CONSTRAINT IF EXISTS rl_events_kind_check',
      'ALTER TABLE rl_events DROP CONSTRAINT IF EXISTS check_kind',
      `ALTER TABLE rl_events ADD CONSTRAINT rl_events_kind_check CHECK (kind IN (
        'artist-created', 'artist-updated', 'album-created', 'album-updated', 'album-deleted', 'reset'))`,
    ],
  },
  {
    version: 10,
    name: "the artists' histories, and who made each change",
    statements: [
      // Who made each change (`callerName`, never a secret), for the event stream; null for those of earlier builds.
      'ALTER TABLE rl_events ADD COLUMN IF NOT EXISTS author TEXT',
      'CREATE SEQUENCE IF NOT EXISTS rl_history_ids',
      // The last changes of each artist and of its albums (sql/history.ts), written in the transaction of the change:
      // `record_id` and `fields` as in rl_events, `author` who made it, `at_ms` when. Each write prunes its artist's
      // to the newest HISTORY_PER_ARTIST, read by the index below: the work per request is bounded, whatever the
      // number of artists. Carried by snapshots, backups and restores with the records.
      `CREATE TABLE IF NOT EXISTS rl_history (
        id BIGINT PRIMARY KEY,
        artist_id BIGINT NOT NULL,
        at_ms BIGINT NOT NULL,
        author TEXT NOT NULL,
        kind TEXT NOT NULL CHECK (kind IN (
          'artist-created', 'artist-updated', 'album-created', 'album-updated', 'album-deleted')),
        record_id BIGINT NOT NULL,
        fields TEXT NOT NULL
      )`,
      'CREATE INDEX IF NOT EXISTS rl_history_by_artist ON rl_history (artist_id, id)',
    ],
  },
  {
    version: 11,
    name: 'the kind of each album',
    statements: [
      // Every album stored before kinds were kept is a studio album (src/model/album.ts, DEFAULT_KIND). The list is
      // written out, not taken from the model: a migration never changes once released, a new kind is a new one.
      "ALTER TABLE rl_albums ADD COLUMN IF NOT EXISTS kind TEXT NOT NULL DEFAULT 'studio'",
      'ALTER TABLE rl_albums DROP CONSTRAINT IF EXISTS rl_albums_kind_check',
      `ALTER TABLE rl_albums ADD CONSTRAINT rl_albums_kind_check CHECK (kind IN (
        'studio', 'live', 'ep', 'compilation', 'soundtrack', 're-recordings'))`,
    ],
  },
]

/** The version of the schema this build expects. */
export const LATEST_VERSION = MIGRATIONS.at(-1)?.version ?? 0
