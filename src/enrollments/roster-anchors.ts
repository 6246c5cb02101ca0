// Places to seek to in a large roster, so that a page far into a course's enrollments does not
// step through every index entry before it as OFFSET would (bench/courses.ts measures it). The key — (enrolled_at, id) — of every
// ANCHOR_STEP-th entry of a roster list is remembered once found, and a page seeks on the
// (course_id, enrolled_at, id) index to the nearest one at or before it, skipping at most
// ANCHOR_STEP - 1 entries. The keys of a list are kept only while its change counter (the sum of
// course_enrollment_counts.changes over the list's role/status buckets, bumped by triggers on
// every insert, delete, status/role change or reordering of an enrollment, whoever writes it)
// stays the same: any change to the list and they are found again.
import { BoundedMap } from '../lib/bounded-map';
import { MAX_PER_PAGE } from '../http/pagination';

/** A position in a roster's order: enrolled_at, then id. */
export type RosterKey = readonly [enrolledAt: string, id: string];

/** Sorts before every (enrolled_at, id): seeking to it is reading from the first entry. */
export const ROSTER_START: RosterKey = ['', ''];

/** One anchor per page of the largest size, so a page of that size starts exactly on one. */
export const ANCHOR_STEP = MAX_PER_PAGE;

/** Where a page starts: seek to `from`, then skip `skip` entries. */
export interface SeekPoint {
  from: RosterKey;
  skip: number;
}

interface ListAnchors {
  version: number;
  /** Anchor j is the key of the entry at offset j × ANCHOR_STEP. */
  keys: Map<number, RosterKey>;
}

export class RosterAnchors {
  private readonly lists: BoundedMap<string, ListAnchors>;

  constructor(maxLists = 1_000) {
    this.lists = new BoundedMap(maxLists);
  }

  /**
   * Where the entry at `offset` of a list is reached from. `list` names the course and filters,
   * `version` is the list's change counter now, and `keyAt(from, skip)` reads the key of the entry
   * `skip` entries after `from` (undefined past the end).
   */
  seekPoint(list: string, version: number, offset: number, keyAt: (from: RosterKey, skip: number) => RosterKey | undefined): SeekPoint {
    const j = Math.floor(offset / ANCHOR_STEP);
    if (j === 0) return { from: ROSTER_START, skip: offset };
    let anchors = this.lists.get(list);
    if (anchors?.version !== version) {
      anchors = { version, keys: new Map() };
      this.lists.set(list, anchors);
    }
    let key = anchors.keys.get(j);
    if (key === undefined) {
      // From the nearest known anchor before it (or the start): a reader paging forwards finds
      // each anchor one page's walk after the last.
      let i = j - 1;
      while (i > 0 && !anchors.keys.has(i)) i--;
      key = keyAt(i === 0 ? ROSTER_START : anchors.keys.get(i)!, (j - i) * ANCHOR_STEP);
      if (key === undefined) return { from: ROSTER_START, skip: offset };
      anchors.keys.set(j, key);
    }
    return { from: key, skip: offset - j * ANCHOR_STEP };
  }
}
