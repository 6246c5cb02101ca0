// The attacking member of bench/collab-cost.ts, in a worker thread of its own: building its updates
// (hundreds of ms for 100,000 items) and framing and masking 1-2 MB WebSocket messages are the
// attacker's work, which in the server's thread would count as the server's stalls. Asked
// { prepare: attack } it builds that attack's updates and answers 'ready'; asked { send: i } it
// sends update i (reconnecting whenever closed) and answers how it ended: 'taken', 'refused' or
// 'closed <code>'.
import { parentPort, workerData } from 'node:worker_threads';
import { WebSocket } from 'ws';
import * as Y from 'yjs';
import { MAX_UPDATE_PLACEHOLDERS } from '../../collab/update-pass';
import { gcFlood, syncStep1Message, syncUpdateMessage, typedBackwards } from '../../test/helpers/yjs-attacks';

export const ATTACKS = [
  { name: 'GC flood of the issue: 590,000 GC structs, 1.18 MB', update: (i: number) => gcFlood(590_000, 1_000 + i) },
  { name: `GC flood at the cap: ${MAX_UPDATE_PLACEHOLDERS.toLocaleString('en')} GC structs`, update: (i: number) => gcFlood(MAX_UPDATE_PLACEHOLDERS, 2_000 + i) },
  { name: '100,000 items, a character typed at a time', update: () => typedBackwards(author, 100_000) },
];
const author = new Y.Doc();

export type AttackerRequest = { prepare: number; rounds: number } | { send: number } | { close: true };

if (parentPort) {
  const port = parentPort;
  const { url } = workerData as { url: string };
  let updates: Uint8Array[] = [];
  let socket: WebSocket | null = null;

  /** Sends one update on a fresh or open socket; resolves with how it ended. */
  const send = async (update: Uint8Array): Promise<string> => {
    if (!socket || socket.readyState !== WebSocket.OPEN) {
      socket = new WebSocket(url);
      await new Promise((resolve, reject) => {
        socket!.once('open', resolve);
        socket!.once('error', reject);
      });
    }
    const ws = socket;
    // Taken once the server answers a sync step 1 sent behind it (the connection's messages are
    // taken in order); refused when it answers permission-denied; or closed. The step 1 carries
    // what the attacker holds, as a stock client's does: the server answers with what it lacks.
    return new Promise<string>((resolve) => {
      const done = (outcome: string) => {
        ws.off('message', onMessage);
        ws.off('close', onClose);
        resolve(outcome);
      };
      const onMessage = (data: Buffer) => {
        if (data[0] === 2) done('refused');
        else if (data[0] === 0 && data[1] === 1) done('taken');
      };
      const onClose = (code: number) => done(`closed ${code}`);
      ws.on('message', onMessage);
      ws.on('close', onClose);
      ws.send(syncUpdateMessage(update));
      ws.send(syncStep1Message(Y.encodeStateVector(author)));
    });
  };

  port.on('message', (request: AttackerRequest) => {
    if ('prepare' in request) {
      updates = Array.from({ length: request.rounds }, (_, i) => ATTACKS[request.prepare]!.update(i));
      port.postMessage('ready');
    } else if ('send' in request) {
      void send(updates[request.send]!).then((outcome) => port.postMessage(outcome));
    } else {
      socket?.terminate();
      port.close();
    }
  });
}
