// Live editing: the Yjs document store, the WebSocket hub (y-websocket protocol) and its HTTP route.
export { collabRouter } from './routes';
