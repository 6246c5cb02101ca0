// A document room: the connections to one open document and their shared presence (awareness).
// It is the store's subscriber for that document: the store calls `onUpdate` only once the update
// is in the log, so nothing is broadcast before it is durable.
import type { DocumentSubscriber } from '../store';
import { Presence } from './presence';
import { awarenessMessage, binaryFrame, encodeAwarenessEntries, updateMessage, type AwarenessEntry } from './protocol';

/** What a room needs of each connection in it. */
export interface RoomMember {
  /**
   * Awareness client ids this member controls, removed when it leaves: a stock client has one, so
   * an array replaced on change rather than a Set per connection.
   */
  awarenessIds: readonly number[];
  send(bytes: Uint8Array): void;
  /** Sends a message already framed (binaryFrame): the same buffer goes to every member. */
  sendFrame(frame: Buffer): void;
}

/** Who is told when the store drops the room's document (a change it held could not be saved). */
export interface RoomOwner<M extends RoomMember> {
  abandonRoom(room: Room<M>): void;
}

/** (Objects with methods rather than closures per room and per connection: a thousand idle documents are a thousand of each.) */
export class Room<M extends RoomMember = RoomMember> implements DocumentSubscriber {
  /**
   * Its members: an array replaced on every join and leave rather than a Set (most rooms have one
   * to a few members), so that a broadcast under way goes on over the members it began with.
   */
  private members: readonly M[] = [];
  readonly presence = new Presence();

  constructor(
    private readonly owner: RoomOwner<M>,
    readonly documentId: string,
  ) {}

  get connections(): readonly M[] {
    return this.members;
  }

  join(member: M): void {
    this.members = [...this.members, member];
  }

  /** Whether `member` was here. */
  leave(member: M): boolean {
    if (!this.members.includes(member)) return false;
    this.members = this.members.filter((m) => m !== member);
    return true;
  }

  /** Everyone leaves at once (the room was abandoned): returns who was here. */
  empty(): readonly M[] {
    const members = this.members;
    this.members = [];
    return members;
  }

  /** A stored update: encoded and framed once, the same buffer written to every other member. */
  onUpdate(update: Uint8Array, origin: unknown): void {
    if (this.members.length < 2 && this.members.includes(origin as M)) return;
    const frame = binaryFrame(updateMessage(update));
    for (const conn of this.members) if (conn !== origin) conn.sendFrame(frame);
  }

  onDropped(): void {
    this.owner.abandonRoom(this);
  }

  get hasPresence(): boolean {
    return this.presence.size > 0;
  }

  /** Everyone's presence, as one awareness message. */
  presenceMessage(): Uint8Array {
    return awarenessMessage(encodeAwarenessEntries(this.presence.entries()));
  }

  /**
   * Applies a member's awareness update (`entries`, read from `update`), tracks the ids it adds and
   * removes, and relays what counted to every member (the sender included, as y-websocket's server
   * does): the bytes as they came when all of it counted, encoded once for all.
   */
  applyAwareness(update: Uint8Array, entries: readonly AwarenessEntry[], from: M, now: number): void {
    const { accepted, added, removed } = this.presence.apply(entries, now);
    if (added.length > 0 || removed.length > 0) {
      const ids = new Set(from.awarenessIds);
      for (const id of added) ids.add(id);
      for (const id of removed) ids.delete(id);
      from.awarenessIds = [...ids];
    }
    if (accepted.length === 0) return;
    this.broadcast(awarenessMessage(accepted.length === entries.length ? update : encodeAwarenessEntries(accepted)));
  }

  /** Whether another member of the room announced this awareness client id. */
  ownedByAnother(member: M, clientId: number): boolean {
    for (const other of this.members) if (other !== member && other.awarenessIds.includes(clientId)) return true;
    return false;
  }

  /** Drops a leaving member's presence, and tells the others. */
  removePresence(member: M): void {
    if (member.awarenessIds.length === 0) return;
    const removed = this.presence.remove(member.awarenessIds);
    if (removed.length > 0) this.broadcast(awarenessMessage(encodeAwarenessEntries(removed)));
  }

  /** Drops the presence of clients silent for 30 s (the hub's ticker calls this on every room). */
  expirePresence(now: number): void {
    const removed = this.presence.expire(now);
    if (removed.length > 0) this.broadcast(awarenessMessage(encodeAwarenessEntries(removed)));
  }

  destroy(): void {}

  private broadcast(bytes: Uint8Array): void {
    if (this.members.length === 0) return;
    const frame = binaryFrame(bytes);
    for (const conn of this.members) conn.sendFrame(frame);
  }
}
