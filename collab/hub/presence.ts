// A room's presence (awareness): the states its members announced, held as the JSON they sent. The
// rules are y-protocols' Awareness's (a newer clock replaces, a null state removes, a state not
// renewed within 30 s times out), without its costs per room: no Y.Doc anchor, no timer of its own
// (the hub's one ticker calls `expire` on every room), no parsing or re-serializing of the states,
// and an accepted update is relayed as the bytes it came in, encoded once for every peer.
import type { AwarenessEntry } from './protocol';

/** As y-protocols' outdatedTimeout: a client that has not renewed its state in this long is gone. */
export const PRESENCE_TIMEOUT_MS = 30_000;

/** What is known of one awareness client: its last clock, its state (null once removed), and when it was last heard of. */
interface Known {
  clock: number;
  state: string | null;
  at: number;
}

const NULL_STATE = 'null';

export class Presence {
  private readonly known = new Map<number, Known>();
  /** Clients with a state (not removed). */
  private present = 0;

  get size(): number {
    return this.present;
  }

  /**
   * Applies an update's entries, as applyAwarenessUpdate does: an entry counts when its clock is
   * newer than the client's, or equal with a null state for a client present. Returns the entries
   * that counted (to relay) and which clients were added or removed.
   */
  apply(entries: readonly AwarenessEntry[], now: number): { accepted: AwarenessEntry[]; added: number[]; removed: number[] } {
    const accepted: AwarenessEntry[] = [];
    const added: number[] = [];
    const removed: number[] = [];
    for (const entry of entries) {
      const known = this.known.get(entry.id);
      const currentClock = known ? known.clock : 0;
      const isNull = entry.state === NULL_STATE;
      const wasPresent = known !== undefined && known.state !== null;
      if (!(currentClock < entry.clock || (currentClock === entry.clock && isNull && wasPresent))) continue;
      const state = isNull ? null : entry.state;
      if (known) {
        known.clock = entry.clock;
        known.state = state;
        known.at = now;
      } else this.known.set(entry.id, { clock: entry.clock, state, at: now });
      if (!wasPresent && state !== null) {
        this.present += 1;
        added.push(entry.id);
      } else if (wasPresent && state === null) {
        this.present -= 1;
        removed.push(entry.id);
      }
      accepted.push(entry);
    }
    return { accepted, added, removed };
  }

  /** Removes these clients' states (a member left); the entries that tell the others, clocks kept. */
  remove(ids: Iterable<number>): AwarenessEntry[] {
    const removed: AwarenessEntry[] = [];
    for (const id of ids) {
      const known = this.known.get(id);
      if (!known || known.state === null) continue;
      known.state = null;
      this.present -= 1;
      removed.push({ id, clock: known.clock, state: NULL_STATE });
    }
    return removed;
  }

  /** Removes the states not renewed within PRESENCE_TIMEOUT_MS; the entries that tell the members. */
  expire(now: number): AwarenessEntry[] {
    if (this.present === 0) return [];
    const stale: number[] = [];
    for (const [id, known] of this.known) if (known.state !== null && now - known.at >= PRESENCE_TIMEOUT_MS) stale.push(id);
    return stale.length ? this.remove(stale) : [];
  }

  /** Every present client's state, as one update's entries. */
  entries(): AwarenessEntry[] {
    const all: AwarenessEntry[] = [];
    for (const [id, known] of this.known) if (known.state !== null) all.push({ id, clock: known.clock, state: known.state });
    return all;
  }
}
