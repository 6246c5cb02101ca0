// Live editing: the Yjs document store, the WebSocket hub (y-websocket protocol) and its HTTP route.
import type { Area } from '../src/context';
import { collabRouter } from './routes';

export const collabArea: Area = { router: collabRouter, scope: { name: 'documents', description: 'documents: bodies, versions, sharing, contexts, favorites, exports' } };
