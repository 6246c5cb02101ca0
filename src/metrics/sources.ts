// What the metrics read from the database when scraped (never on a request's path).
import type { Database as SqliteDatabase } from 'better-sqlite3';

/**
 * Log rows written since each document's last compaction: per document, a range of the
 * (document_id, id) index, so a scrape reads the pending rows and one entry per document,
 * not the whole log.
 */
export function pendingLogRows(sqlite: SqliteDatabase): () => number {
  let statement: { get(): unknown } | undefined;
  return () => {
    statement ??= sqlite.prepare(
      `SELECT coalesce(sum((SELECT count(*) FROM document_updates u
                            WHERE u.document_id = d.id AND u.id > coalesce(s.through_update_id, 0))), 0) AS n
       FROM documents d LEFT JOIN document_states s ON s.document_id = d.id`,
    );
    return (statement.get() as { n: number }).n;
  };
}

/** Webhook deliveries waiting to be sent (new, or due for a retry); the queue index covers it. */
export function pendingWebhookDeliveries(sqlite: SqliteDatabase): () => number {
  let statement: { get(): unknown } | undefined;
  return () => {
    statement ??= sqlite.prepare(`SELECT count(*) AS n FROM webhook_deliveries WHERE status = 'pending'`);
    return (statement.get() as { n: number }).n;
  };
}
