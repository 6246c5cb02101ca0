// The document store: the only writer of document bodies (document-store.ts), in the parts listed
// in docs/architecture.md. What the rest of the server imports of it.
export { CONTENT_FIELD } from '../yjs-tasks';
export { DEFAULT_MAX_DOCUMENT_BYTES } from './budget';
export { DocumentStore } from './document-store';
export { DocumentTooLargeError, InvalidUpdateError, PersistenceError, SizeUnknownError, UnknownDocumentError, UnreadableDocumentError } from './errors';
export { textOfState, type DocumentSubscriber } from './loaded';
export { unfinishedClearings } from './statements';
export type { ChangeRow, Snapshot, StoreMetrics, StoreOptions } from './types';
export { DEFAULT_OFFLOAD_MIN_BYTES } from './worker-path';
