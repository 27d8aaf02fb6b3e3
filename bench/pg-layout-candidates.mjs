// node bench/pg-layout-candidates.mjs — the WAL per message of candidate layouts for the outbox,
// before one is chosen (docs/postgres.md, "Schema 6: the layouts measured"). Each candidate takes
// the same work on a fresh database of one PostgreSQL server: BENCH_MESSAGES messages with UUID
// ids written 100 a statement (ingest, synchronous_commit on), then claimed 100 at a time and each
// outcome recorded (delivered at the first attempt, the common case). The statements are the
// shape of the store's, not the store itself: what each layout's rows and indexes cost.
import { randomUUID } from 'node:crypto'
import pg from 'pg'
import { startPostgresServer } from '../test/support/postgres-server.mjs'

const N = Number(process.env.BENCH_MESSAGES ?? 20_000)
const BATCH = 100
const DAY_MS = 86_400_000

function message(i) {
  return JSON.stringify({
    type: 'track',
    messageId: randomUUID(),
    userId: `user-${i % 5000}`,
    event: 'Order Completed',
    timestamp: new Date().toISOString(),
    properties: { orderId: `o-${i}`, revenue: 9.99, currency: 'EUR', items: ['a', 'b'] },
    context: { library: { name: 'tracklet', version: '0.1.0' } },
  })
}

// Each candidate: its tables, one ingest statement ($1 ids, $2 JSON, $3 user ids, $4 events), one
// claim (returns the claimed keys) and one outcome statement for the claimed keys ($1).
const CANDIDATES = {
  'schema 5: one wide row per delivery, updated at claim and outcome': {
    setup: `
      CREATE TABLE deliveries (id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, source text NOT NULL,
        destination text NOT NULL, message_id text NOT NULL, type text NOT NULL, message text NOT NULL,
        status text NOT NULL, attempts integer NOT NULL DEFAULT 0, first_attempt_at bigint,
        next_attempt_at bigint NOT NULL, last_error text, created_at bigint NOT NULL, updated_at bigint NOT NULL,
        lease_until bigint, lease_owner text, user_id text, event text, paused_at bigint) WITH (fillfactor = 50);
      CREATE UNIQUE INDEX ON deliveries (message_id, source, destination);
      CREATE INDEX ON deliveries (source, next_attempt_at, id) WHERE status = 'pending';
      CREATE INDEX ON deliveries (updated_at) WHERE status = 'delivered';
      CREATE INDEX ON deliveries (user_id, id) WHERE user_id IS NOT NULL;
      CREATE INDEX ON deliveries (id) WHERE status = 'failed';
      CREATE TABLE attempts (id bigint GENERATED ALWAYS AS IDENTITY, delivery_id bigint NOT NULL, at bigint NOT NULL,
        url text NOT NULL, status integer, error text, ms integer NOT NULL, response_body text, request_headers text,
        PRIMARY KEY (delivery_id, id));
      CREATE INDEX ON attempts (url, at);`,
    ingest: `INSERT INTO deliveries (source, destination, message_id, type, message, user_id, event, status,
        next_attempt_at, created_at, updated_at)
      SELECT 'bench', 'Webhooks', m, 'track', j, u, e, 'pending', 0, 0, 0 FROM unnest($1::text[], $2::text[], $3::text[], $4::text[]) AS x (m, j, u, e)`,
    claim: `UPDATE deliveries d SET lease_until = 1, lease_owner = 'r' FROM (SELECT id FROM deliveries
        WHERE source = 'bench' AND status = 'pending' AND lease_until IS NULL ORDER BY next_attempt_at, id LIMIT ${BATCH}
        FOR UPDATE SKIP LOCKED) due WHERE d.id = due.id RETURNING d.id`,
    outcome: `WITH done AS (UPDATE deliveries SET status = 'delivered', attempts = attempts + 1, updated_at = 2,
        lease_until = NULL, lease_owner = NULL WHERE id = ANY($1::bigint[]) RETURNING id)
      INSERT INTO attempts (delivery_id, at, url, status, ms, request_headers)
      SELECT id, 2, 'http://127.0.0.1/hook', 200, 3, '{"content-type":"application/json"}' FROM done`,
  },
  'candidate: messages written once (partitioned by day) + a narrow queue + an outcome log (partitioned)': {
    setup: `
      CREATE TABLE messages (received_at bigint NOT NULL, id bigint GENERATED ALWAYS AS IDENTITY,
        source text NOT NULL, message_id text NOT NULL, user_id text, event text, message text NOT NULL)
        PARTITION BY RANGE (received_at);
      CREATE TABLE messages_d0 PARTITION OF messages FOR VALUES FROM (0) TO (${DAY_MS});
      CREATE INDEX ON messages (source, message_id);
      CREATE INDEX ON messages (user_id) WHERE user_id IS NOT NULL;
      CREATE INDEX ON messages USING brin (received_at);
      CREATE TABLE queue (message_id bigint NOT NULL, received_at bigint NOT NULL, source text NOT NULL,
        destination text NOT NULL, next_attempt_at bigint NOT NULL, lease_until bigint, lease_owner text,
        attempts integer NOT NULL DEFAULT 0, first_attempt_at bigint, dead boolean NOT NULL DEFAULT false,
        PRIMARY KEY (message_id, destination)) WITH (fillfactor = 70);
      CREATE INDEX ON queue (source, next_attempt_at) WHERE NOT dead;
      CREATE TABLE outcomes (at bigint NOT NULL, message_id bigint NOT NULL, destination text NOT NULL,
        url text NOT NULL, status integer, error text, ms integer NOT NULL, request_headers text, response_body text)
        PARTITION BY RANGE (at);
      CREATE TABLE outcomes_d0 PARTITION OF outcomes FOR VALUES FROM (0) TO (${DAY_MS});
      CREATE INDEX ON outcomes (message_id);`,
    ingest: `WITH m AS (INSERT INTO messages (received_at, source, message_id, user_id, event, message)
        SELECT 1, 'bench', m, u, e, j FROM unnest($1::text[], $2::text[], $3::text[], $4::text[]) AS x (m, j, u, e)
        RETURNING id, received_at)
      INSERT INTO queue (message_id, received_at, source, destination, next_attempt_at)
      SELECT id, received_at, 'bench', 'Webhooks', 0 FROM m`,
    claim: `UPDATE queue q SET lease_until = 1, lease_owner = 'r' FROM (SELECT message_id, destination FROM queue
        WHERE source = 'bench' AND NOT dead AND lease_until IS NULL ORDER BY next_attempt_at LIMIT ${BATCH}
        FOR UPDATE SKIP LOCKED) due WHERE q.message_id = due.message_id AND q.destination = due.destination
      RETURNING q.message_id`,
    outcome: `WITH done AS (DELETE FROM queue WHERE message_id = ANY($1::bigint[]) RETURNING message_id, destination)
      INSERT INTO outcomes (at, message_id, destination, url, status, ms, request_headers)
      SELECT 2, message_id, destination, 'http://127.0.0.1/hook', 200, 3, '{"content-type":"application/json"}' FROM done`,
  },
  'candidate, narrower: as above, the duplicate check on a 16-byte key (md5 of source and id, as uuid) and the queue with one index':
    {
      setup: `
      CREATE TABLE messages (received_at bigint NOT NULL, id bigint GENERATED ALWAYS AS IDENTITY,
        source text NOT NULL, message_key uuid NOT NULL, message_id text NOT NULL, user_id text, event text,
        message text NOT NULL) PARTITION BY RANGE (received_at);
      CREATE TABLE messages_d0 PARTITION OF messages FOR VALUES FROM (0) TO (${DAY_MS});
      CREATE INDEX ON messages (message_key);
      CREATE INDEX ON messages (user_id) WHERE user_id IS NOT NULL;
      CREATE INDEX ON messages USING brin (received_at);
      CREATE TABLE queue (source text NOT NULL, next_attempt_at bigint NOT NULL, message_id bigint NOT NULL,
        received_at bigint NOT NULL, destination text NOT NULL, lease_until bigint, lease_owner text,
        attempts integer NOT NULL DEFAULT 0, first_attempt_at bigint, dead boolean NOT NULL DEFAULT false,
        PRIMARY KEY (source, next_attempt_at, message_id, destination)) WITH (fillfactor = 70);
      CREATE TABLE outcomes (at bigint NOT NULL, message_id bigint NOT NULL, destination text NOT NULL,
        url text NOT NULL, status integer, error text, ms integer NOT NULL, request_headers text, response_body text)
        PARTITION BY RANGE (at);
      CREATE TABLE outcomes_d0 PARTITION OF outcomes FOR VALUES FROM (0) TO (${DAY_MS});
      CREATE INDEX ON outcomes (message_id);`,
      ingest: `WITH m AS (INSERT INTO messages (received_at, source, message_key, message_id, user_id, event, message)
        SELECT 1, 'bench', md5('bench' || chr(1) || m)::uuid, m, u, e, j
        FROM unnest($1::text[], $2::text[], $3::text[], $4::text[]) AS x (m, j, u, e)
        RETURNING id, received_at)
      INSERT INTO queue (source, next_attempt_at, message_id, received_at, destination)
      SELECT 'bench', 0, id, received_at, 'Webhooks' FROM m`,
      claim: `UPDATE queue q SET lease_until = 1, lease_owner = 'r' FROM (SELECT ctid FROM queue
        WHERE source = 'bench' AND NOT dead AND lease_until IS NULL ORDER BY next_attempt_at LIMIT ${BATCH}
        FOR UPDATE SKIP LOCKED) due WHERE q.ctid = due.ctid RETURNING q.message_id`,
      outcome: `WITH done AS (DELETE FROM queue WHERE source = 'bench' AND next_attempt_at = 0
        AND message_id = ANY($1::bigint[]) RETURNING message_id, destination)
      INSERT INTO outcomes (at, message_id, destination, url, status, ms, request_headers)
      SELECT 2, message_id, destination, 'http://127.0.0.1/hook', 200, 3, '{"content-type":"application/json"}' FROM done`,
    },
  'candidate, range leases: messages as above with no queue row at ingest; a claim leases a range of message ids (one row), a batch delivered at once is one outcome row':
    {
      setup: `
      CREATE TABLE messages (received_at bigint NOT NULL, id bigint GENERATED ALWAYS AS IDENTITY,
        source text NOT NULL, message_key uuid NOT NULL, message_id text NOT NULL, user_id text, event text,
        message text NOT NULL) PARTITION BY RANGE (received_at);
      CREATE TABLE messages_d0 PARTITION OF messages FOR VALUES FROM (0) TO (${DAY_MS});
      CREATE INDEX ON messages (message_key);
      CREATE INDEX ON messages (user_id) WHERE user_id IS NOT NULL;
      CREATE INDEX ON messages (source, id);
      CREATE INDEX ON messages USING brin (received_at);
      CREATE TABLE cursors (source text NOT NULL, destination text NOT NULL, through bigint NOT NULL,
        PRIMARY KEY (source, destination));
      INSERT INTO cursors VALUES ('bench', 'Webhooks', 0);
      CREATE TABLE leases (source text NOT NULL, destination text NOT NULL, first_id bigint NOT NULL,
        last_id bigint NOT NULL, lease_until bigint, lease_owner text, PRIMARY KEY (source, destination, first_id));
      CREATE TABLE batch_outcomes (at bigint NOT NULL, source text NOT NULL, destination text NOT NULL,
        first_id bigint NOT NULL, last_id bigint NOT NULL, url text NOT NULL, ms integer NOT NULL) PARTITION BY RANGE (at);
      CREATE TABLE batch_outcomes_d0 PARTITION OF batch_outcomes FOR VALUES FROM (0) TO (${DAY_MS});
      CREATE INDEX ON batch_outcomes (source, destination, last_id);`,
      ingest: `INSERT INTO messages (received_at, source, message_key, message_id, user_id, event, message)
        SELECT 1, 'bench', md5('bench' || chr(1) || m)::uuid, m, u, e, j
        FROM unnest($1::text[], $2::text[], $3::text[], $4::text[]) AS x (m, j, u, e)`,
      claim: `WITH c AS (SELECT through FROM cursors WHERE source = 'bench' AND destination = 'Webhooks' FOR UPDATE),
      next AS (SELECT id FROM messages, c WHERE source = 'bench' AND id > c.through ORDER BY id LIMIT ${BATCH}),
      span AS (SELECT min(id) AS first_id, max(id) AS last_id FROM next),
      leased AS (INSERT INTO leases SELECT 'bench', 'Webhooks', first_id, last_id, 1, 'r' FROM span WHERE first_id IS NOT NULL),
      moved AS (UPDATE cursors SET through = span.last_id FROM span WHERE span.last_id IS NOT NULL
        AND source = 'bench' AND destination = 'Webhooks')
      SELECT first_id, last_id FROM span WHERE first_id IS NOT NULL`,
      outcome: `WITH gone AS (DELETE FROM leases WHERE source = 'bench' AND destination = 'Webhooks' AND first_id = ($1::bigint[])[1]
        RETURNING first_id, last_id)
      INSERT INTO batch_outcomes SELECT 2, 'bench', 'Webhooks', first_id, last_id, 'http://127.0.0.1/hook', 3 FROM gone`,
    },
  // Range leases made safe against a transaction still open: ids are handed out before commit, so a
  // cursor on id alone can pass one committed later. Each row carries its writer's transaction id
  // (xid8); every transaction below the snapshot's xmin has ended, and any later write gets an xid at
  // or above it, so the rows under xmin are final and a cursor on (xid, id) never passes one.
  'candidate, range leases, safe: as above, each message with its transaction id (xid8), the cursor on (xid, id) below the snapshot xmin':
    {
      setup: `
      CREATE TABLE messages (received_at bigint NOT NULL, id bigint GENERATED ALWAYS AS IDENTITY,
        xid xid8 NOT NULL DEFAULT pg_current_xact_id(),
        source text NOT NULL, message_key uuid NOT NULL, message_id text NOT NULL, user_id text, event text,
        message text NOT NULL) PARTITION BY RANGE (received_at);
      CREATE TABLE messages_d0 PARTITION OF messages FOR VALUES FROM (0) TO (${DAY_MS});
      CREATE INDEX ON messages (message_key);
      CREATE INDEX ON messages (user_id) WHERE user_id IS NOT NULL;
      CREATE INDEX ON messages (source, xid, id);
      CREATE INDEX ON messages USING brin (received_at);
      CREATE TABLE cursors (source text NOT NULL, destination text NOT NULL, through_xid xid8 NOT NULL,
        through_id bigint NOT NULL, PRIMARY KEY (source, destination));
      INSERT INTO cursors VALUES ('bench', 'Webhooks', '0', 0);
      CREATE TABLE leases (source text NOT NULL, destination text NOT NULL, first_xid xid8 NOT NULL,
        first_id bigint NOT NULL, last_xid xid8 NOT NULL, last_id bigint NOT NULL, lease_until bigint,
        lease_owner text, PRIMARY KEY (source, destination, first_xid, first_id));
      CREATE TABLE batch_outcomes (at bigint NOT NULL, source text NOT NULL, destination text NOT NULL,
        first_xid xid8 NOT NULL, first_id bigint NOT NULL, last_xid xid8 NOT NULL, last_id bigint NOT NULL,
        url text NOT NULL, ms integer NOT NULL) PARTITION BY RANGE (at);
      CREATE TABLE batch_outcomes_d0 PARTITION OF batch_outcomes FOR VALUES FROM (0) TO (${DAY_MS});
      CREATE INDEX ON batch_outcomes (source, destination, last_xid, last_id);`,
      ingest: `INSERT INTO messages (received_at, source, message_key, message_id, user_id, event, message)
        SELECT 1, 'bench', md5('bench' || chr(1) || m)::uuid, m, u, e, j
        FROM unnest($1::text[], $2::text[], $3::text[], $4::text[]) AS x (m, j, u, e)`,
      claim: `WITH c AS (SELECT through_xid, through_id FROM cursors WHERE source = 'bench' AND destination = 'Webhooks' FOR UPDATE),
      next AS (SELECT xid, id FROM messages, c WHERE source = 'bench' AND (xid, id) > (c.through_xid, c.through_id)
        AND xid < pg_snapshot_xmin(pg_current_snapshot()) ORDER BY xid, id LIMIT ${BATCH}),
      span AS (SELECT (array_agg(xid ORDER BY xid, id))[1] AS first_xid,
        (array_agg(id ORDER BY xid, id))[1] AS first_id, (array_agg(xid ORDER BY xid DESC, id DESC))[1] AS last_xid,
        (array_agg(id ORDER BY xid DESC, id DESC))[1] AS last_id FROM next),
      leased AS (INSERT INTO leases SELECT 'bench', 'Webhooks', first_xid, first_id, last_xid, last_id, 1, 'r'
        FROM span WHERE first_id IS NOT NULL),
      moved AS (UPDATE cursors SET through_xid = span.last_xid, through_id = span.last_id FROM span
        WHERE span.last_id IS NOT NULL AND source = 'bench' AND destination = 'Webhooks')
      SELECT first_id, first_xid FROM span WHERE first_id IS NOT NULL`,
      outcome: `WITH gone AS (DELETE FROM leases WHERE source = 'bench' AND destination = 'Webhooks'
        AND first_id = ($1::bigint[])[1] RETURNING first_xid, first_id, last_xid, last_id)
      INSERT INTO batch_outcomes SELECT 2, 'bench', 'Webhooks', first_xid, first_id, last_xid, last_id,
        'http://127.0.0.1/hook', 3 FROM gone`,
      // Every message delivered once: covered by exactly one outcome's range.
      settled: `SELECT count(*)::int AS n FROM messages m JOIN batch_outcomes b
        ON (m.xid, m.id) >= (b.first_xid, b.first_id) AND (m.xid, m.id) <= (b.last_xid, b.last_id)`,
    },
}

async function walLsn(client) {
  return (await client.query('SELECT pg_current_wal_lsn()::text AS lsn')).rows[0].lsn
}

async function measure(url, candidate) {
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  await client.query(candidate.setup)
  await client.query('CHECKPOINT')
  const start = await walLsn(client)
  for (let i = 0; i < N; i += BATCH) {
    const rows = Array.from({ length: Math.min(BATCH, N - i) }, (_, k) => message(i + k))
    await client.query(candidate.ingest, [
      rows.map((r) => JSON.parse(r).messageId),
      rows,
      rows.map((r) => JSON.parse(r).userId),
      rows.map((r) => JSON.parse(r).event),
    ])
  }
  const ingested = await walLsn(client)
  for (;;) {
    const { rows } = await client.query(candidate.claim)
    if (rows.length === 0) break
    await client.query(candidate.outcome, [rows.map((r) => Object.values(r)[0])])
  }
  const delivered = await walLsn(client)
  if (candidate.settled !== undefined) {
    const { n } = (await client.query(candidate.settled)).rows[0]
    if (n !== N) throw new Error(`${n} of ${N} messages delivered`)
  }
  const diff = async (a, b) => Number((await client.query('SELECT pg_wal_lsn_diff($1, $2) AS d', [b, a])).rows[0].d)
  const result = { ingest: (await diff(start, ingested)) / N, delivery: (await diff(ingested, delivered)) / N }
  await client.end()
  return result
}

// The safe range lease's claim must not pass a message whose transaction is still open: A writes
// first and stays open, B writes after it and commits; a claim then takes nothing (B's row sits
// above A's xid, which is the xmin), and after A commits takes both, in order.
async function checkOpenTransactionGuard(url, candidate) {
  const [a, b, relay] = [0, 1, 2].map(() => new pg.Client({ connectionString: url }))
  for (const c of [a, b, relay]) await c.connect()
  try {
    await relay.query(candidate.setup)
    const one = (i) => [[randomUUID()], [message(i)], ['u'], ['e']]
    await a.query('BEGIN')
    await a.query(candidate.ingest, one(0))
    await b.query(candidate.ingest, one(1))
    const early = await relay.query(candidate.claim)
    if (early.rows.length !== 0) throw new Error('the claim passed a message whose transaction is open')
    await a.query('COMMIT')
    const late = await relay.query(candidate.claim)
    const leased = await relay.query(`SELECT count(*)::int AS n FROM messages m JOIN leases l
      ON (m.xid, m.id) >= (l.first_xid, l.first_id) AND (m.xid, m.id) <= (l.last_xid, l.last_id)`)
    if (late.rows.length !== 1 || leased.rows[0].n !== 2)
      throw new Error('the claim missed the messages once committed')
  } finally {
    for (const c of [a, b, relay]) await c.end()
  }
}

const server = await startPostgresServer({ durable: true })
const only = process.env.BENCH_LAYOUT
try {
  console.log(
    `WAL per message by layout, ${N.toLocaleString('en-US')} messages with UUID ids (full-page images included):`,
  )
  let n = 0
  for (const [name, candidate] of Object.entries(CANDIDATES)) {
    if (only !== undefined && !name.includes(only)) continue
    if (candidate.settled !== undefined)
      await checkOpenTransactionGuard(await server.createDatabase(`guard_${n}`), candidate)
    const { ingest, delivery } = await measure(await server.createDatabase(`layout_${n++}`), candidate)
    console.log(
      `  ${Math.round(ingest + delivery)} B (ingest ${Math.round(ingest)}, claim + outcome ${Math.round(delivery)})  ${name}`,
    )
  }
} catch (error) {
  console.error(error.message)
  process.exitCode = 1
} finally {
  await server.stop()
}
