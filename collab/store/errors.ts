// What the store throws. Each error carries its problem (src/http/errors.ts), so that every route
// answers it the same way; its message, which may name internals, is only logged.
import { AppError } from '../../src/http/errors';

/**
 * Thrown for bytes that are not an update the document can take whole; nothing was stored.
 * `lacksChanges`: it needs changes the document does not hold (see UpdateProblem).
 */
export class InvalidUpdateError extends AppError {
  constructor(
    message: string,
    readonly lacksChanges = false,
  ) {
    super('validation_failed', 'The update cannot be applied to this document', { status: 422, message });
  }
}

/** Thrown when the document has no row (never created, or erased). */
export class UnknownDocumentError extends AppError {
  constructor(message: string) {
    super('not_found', 'Document not found', { message });
  }
}

/** Writing to the log failed; the update was neither stored nor passed on. */
export class PersistenceError extends AppError {
  constructor(message: string) {
    // A fault of the server: no detail for the client, the error in the log.
    super('internal', '', { message, log: 'document change could not be stored' });
  }
}

/** The change would take the document past its size limit; nothing was stored. `detail`: what the client is told. */
export class DocumentTooLargeError extends AppError {
  constructor(
    readonly bytes: number,
    readonly limit: number,
    detail = `The document would be about ${bytes} bytes encoded, above the limit of ${limit} bytes (DOCUMENT_MAX_BYTES); nothing was changed`,
  ) {
    super('payload_too_large', detail, { message: `the document would be about ${bytes} bytes encoded, above its limit of ${limit} bytes` });
  }
}

/**
 * The change cannot be judged against the document's size limit until the document is measured,
 * which a worker thread does (encoding a large document on the event loop would stall it): nothing
 * was stored; try the change again once `measured` settles. Only the hub's deferred writes see it.
 */
export class SizeUnknownError extends Error {
  constructor(readonly measured: Promise<void>) {
    super('the document is being measured');
  }
}

/** What is stored for the document (or a version of it) cannot be loaded or encoded. `detail`: what the client is told. */
export class UnreadableDocumentError extends AppError {
  constructor(message: string, detail = 'The stored body of this document cannot be encoded or loaded, so it cannot be read, copied or versioned') {
    super('document_unreadable', detail, { message, log: 'stored document cannot be read' });
  }
}
