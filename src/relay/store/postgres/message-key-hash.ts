import { MESSAGE_KEY_OF } from './schema6'

// The messages' key index (the duplicate check, searches by message id) as a hash index rather
// than a B-tree (docs/postgres.md, "The duplicate check at 30 days"). PostgreSQL cannot prune the
// day partitions by the message id, so ingest's look-up searches the key index of every retained
// day: a B-tree descends three levels for each key in each partition, a hash index reads one
// bucket page. Both searches are equalities, which a hash index serves; its entries are smaller.

/** The hash index's name while it is built beside the B-tree (./prepare-message-key.ts). */
export const MESSAGE_KEY_HASH = 'messages_key_hash'

/** What the key indexes, as SQL over the messages' columns. */
export const MESSAGE_KEY_EXPRESSION = `(${MESSAGE_KEY_OF('message_id')})`

/**
 * The PostgreSQL step: the hash index, built beforehand without blocking writers on an outbox
 * that had rows, or made here (a fresh database, or a preparation cut short), takes the B-tree's
 * name and place.
 */
export const POSTGRES_MESSAGE_KEY_HASH_STEP = `
  DO $$
  BEGIN
    IF NOT EXISTS (
      SELECT 1 FROM pg_index WHERE indexrelid = to_regclass('${MESSAGE_KEY_HASH}') AND indisvalid
    ) THEN
      DROP INDEX IF EXISTS ${MESSAGE_KEY_HASH};
      CREATE INDEX ${MESSAGE_KEY_HASH} ON messages USING hash (${MESSAGE_KEY_EXPRESSION});
    END IF;
  END $$;
  DROP INDEX IF EXISTS messages_key;
  ALTER INDEX ${MESSAGE_KEY_HASH} RENAME TO messages_key;
`
