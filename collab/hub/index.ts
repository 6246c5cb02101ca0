// The live-editing hub (y-websocket protocol on `GET /collab/{document_id}`): what the server, the
// documents area and the tests use of it. See docs/live-editing.md and docs/architecture.md.
export { CollabHub, type HubOptions } from './server';
export { type AccessResolver, type CollabAccess } from './access';
export { type HubMetrics } from './connection';
export { CLOSE, encodeAwarenessEntries, MESSAGE_AUTH, MESSAGE_AWARENESS, MESSAGE_QUERY_AWARENESS, MESSAGE_SYNC, type AwarenessEntry } from './protocol';
