// A document room: the connections to one open document and their shared presence (awareness).
// It is the store's subscriber for that document: the store calls `onUpdate` only once the update
// is in the log, so nothing is broadcast before it is durable.
import * as awarenessProtocol from 'y-protocols/awareness';
import type { Doc } from 'yjs';
import type { DocumentSubscriber } from '../store';
import { awarenessMessage, updateMessage } from './protocol';

/** What a room needs of each connection in it. */
export interface RoomMember {
  /** Awareness client ids this member controls, removed when it leaves. */
  readonly awarenessIds: Set<number>;
  send(bytes: Uint8Array): void;
}

/** Who is told when the store drops the room's document (a change it held could not be saved). */
export interface RoomOwner<M extends RoomMember> {
  abandonRoom(room: Room<M>): void;
}

interface AwarenessChange {
  added: number[];
  updated: number[];
  removed: number[];
}

/** (Objects with methods rather than closures per room and per connection: a thousand idle documents are a thousand of each.) */
export class Room<M extends RoomMember = RoomMember> implements DocumentSubscriber {
  readonly connections = new Set<M>();
  readonly awareness: awarenessProtocol.Awareness;

  /** `doc` is only the awareness's anchor: the room never reads it, the store serves content once durable. */
  constructor(
    private readonly owner: RoomOwner<M>,
    readonly documentId: string,
    doc: Doc,
  ) {
    const awareness = (this.awareness = new awarenessProtocol.Awareness(doc));
    awareness.setLocalState(null);
    awareness.on('update', ({ added, updated, removed }: AwarenessChange, origin: unknown) => {
      const member = this.memberOf(origin);
      if (member) {
        for (const id of added) member.awarenessIds.add(id);
        for (const id of removed) member.awarenessIds.delete(id);
      }
      const bytes = awarenessMessage(awarenessProtocol.encodeAwarenessUpdate(awareness, [...added, ...updated, ...removed]));
      for (const conn of this.connections) conn.send(bytes);
    });
  }

  onUpdate(update: Uint8Array, origin: unknown): void {
    const bytes = updateMessage(update);
    for (const conn of this.connections) if (conn !== origin) conn.send(bytes);
  }

  onDropped(): void {
    this.owner.abandonRoom(this);
  }

  get hasPresence(): boolean {
    return this.awareness.getStates().size > 0;
  }

  /** Everyone's presence, as one awareness message. */
  presenceMessage(): Uint8Array {
    return awarenessMessage(awarenessProtocol.encodeAwarenessUpdate(this.awareness, [...this.awareness.getStates().keys()]));
  }

  /** Applies a member's awareness update, the member as its origin (its ids are tracked). */
  applyAwareness(update: Uint8Array, from: M): void {
    awarenessProtocol.applyAwarenessUpdate(this.awareness, update, from);
  }

  /** Whether another member of the room announced this awareness client id. */
  ownedByAnother(member: M, clientId: number): boolean {
    for (const other of this.connections) if (other !== member && other.awarenessIds.has(clientId)) return true;
    return false;
  }

  /** Drops a leaving member's presence. */
  removePresence(member: M): void {
    if (member.awarenessIds.size > 0) awarenessProtocol.removeAwarenessStates(this.awareness, [...member.awarenessIds], null);
  }

  destroy(): void {
    this.awareness.destroy();
  }

  private memberOf(origin: unknown): M | null {
    return origin !== null && typeof origin === 'object' && this.connections.has(origin as M) ? (origin as M) : null;
  }
}
