// Live editing: the Yjs document store, the WebSocket hub (y-websocket protocol) and its HTTP route.
import type { Area } from '../src/context';
import { DOCUMENTS_SCOPE } from './scope';
import { collabRouter } from './routes';

export const collabArea: Area = { router: collabRouter, scope: DOCUMENTS_SCOPE };
