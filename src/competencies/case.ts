// IMS CASE 1.0 (Competencies and Academic Standards Exchange) packages: import a framework from a
// package, and export a framework in the same shape, as it came.
//
// Mapping: CFDocument → framework (identifier kept as case_identifier; title, creator, version,
// description); CFItem → competency (identifier kept; humanCodingScheme → code, or the identifier
// when an item has none; fullStatement → title; notes, else abbreviatedStatement → description;
// CFItemType → item_type); an `isChildOf` association (origin = the child item, destination = the
// parent item, or the CFDocument for a top-level item) → parent_id. What has no column is kept as
// given: the CFDocument and each CFItem whole (JSON), every CFAssociation of every type with its
// identifier (competency_case_associations), and the package's other members (CFDefinitions,
// CFRubrics). An export gives them back as they came; only what was changed here differs.
//
// A re-import finds the framework by CFDocument.identifier and each competency by its item's
// identifier, and updates them in place (alignments stay); the package's associations replace the
// framework's. Items that left the package are kept (an import never deletes what instructors may
// have aligned); the answer counts them.
//
// Off the event loop (issue 41: 20,000 items held it 5.5 s): a large package is read and checked
// in a worker thread (case-parse.ts); its rows are then staged in TEMP tables of the connection, a
// few milliseconds a turn (other requests run between the turns; nothing of the main database is
// written yet, so they read the framework as it was); then one transaction moves them in with a
// handful of set-wise statements. A package that does not hold together is a 422 naming the
// offending item, and nothing is written: the moving in is one transaction, rolled back whole.
import { asc, eq } from 'drizzle-orm';
import type Database from 'better-sqlite3';
import { inTransaction, type Db } from '../../db/client';
import { competencyCaseAssociations, competencyFrameworks, DEFAULT_MASTERY_THRESHOLD } from '../../db/schema';
import type { Clock } from '../lib/clock';
import { badRequest, unprocessable } from '../http/errors';
import { yieldToEventLoop } from '../lib/event-loop';
import { newId } from '../lib/ids';
import { isUniqueViolation } from '../lib/sql';
import type { WorkerPool } from '../lib/worker-pool';
import { associationId, readCasePackage, type ParsedPackage, type ParseOutcome } from './case-parse';
import type { CompetencyRow, FrameworkRow } from './service';

export type CaseAssociationRow = typeof competencyCaseAssociations.$inferSelect;

const PARSE_TASK = new URL('./case-parse.ts', import.meta.url);

/** Bodies up to this size are read on the event loop (a worker's hand-over would cost more than it saves). */
const INLINE_MAX_BYTES = 256 * 1024;
/** How long one turn of staging may write to the TEMP tables before letting other work run. */
const STAGE_SLICE_MS = 4;

export interface ImportResult {
  framework: FrameworkRow;
  /** The package's CFDocument was not imported before: the framework was created. */
  isNew: boolean;
  created: number;
  updated: number;
  /** Competencies from an earlier import that this package no longer lists: kept as they were. */
  notInPackage: number;
}

/** The body read and checked: on the event loop when small, in a worker thread otherwise. */
async function readPackage(workers: WorkerPool, bytes: Uint8Array): Promise<ParsedPackage> {
  const outcome: ParseOutcome =
    bytes.byteLength <= INLINE_MAX_BYTES ? readCasePackage(bytes) : await workers.run<ParseOutcome>(PARSE_TASK, { bytes });
  if (outcome.ok) return outcome.pkg;
  throw outcome.status === 400 ? badRequest(outcome.detail, outcome.errors) : unprocessable(outcome.detail, outcome.errors);
}

// ---------------------------------------------------------------- staging (TEMP tables)

const STAGE_TABLES = [
  `CREATE TEMP TABLE IF NOT EXISTS case_stage_items (
    stage TEXT NOT NULL, identifier TEXT NOT NULL, position INTEGER NOT NULL,
    new_id TEXT NOT NULL, row_id TEXT, matched INTEGER NOT NULL DEFAULT 0,
    parent_identifier TEXT, parent_id TEXT,
    code TEXT NOT NULL, title TEXT NOT NULL, description TEXT, item_type TEXT,
    case_uri TEXT, case_last_change_at TEXT, case_item TEXT NOT NULL,
    PRIMARY KEY (stage, identifier)
  ) WITHOUT ROWID`,
  `CREATE TEMP TABLE IF NOT EXISTS case_stage_associations (
    stage TEXT NOT NULL, position INTEGER NOT NULL, id TEXT NOT NULL, identifier TEXT NOT NULL,
    association_type TEXT NOT NULL, origin_identifier TEXT NOT NULL, destination_identifier TEXT NOT NULL, body TEXT NOT NULL,
    PRIMARY KEY (stage, position)
  ) WITHOUT ROWID`,
];

const statementsBySqlite = new WeakMap<Database.Database, ReturnType<typeof prepareStatements>>();

function prepareStatements(sqlite: Database.Database) {
  for (const ddl of STAGE_TABLES) sqlite.exec(ddl);
  return {
    stageItem: sqlite.prepare(
      `INSERT INTO temp.case_stage_items (stage, identifier, position, new_id, parent_identifier, code, title, description, item_type, case_uri, case_last_change_at, case_item)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    ),
    stageAssociation: sqlite.prepare(
      `INSERT INTO temp.case_stage_associations (stage, position, id, identifier, association_type, origin_identifier, destination_identifier, body)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
    ),
    dropItems: sqlite.prepare('DELETE FROM temp.case_stage_items WHERE stage = ?'),
    dropAssociations: sqlite.prepare('DELETE FROM temp.case_stage_associations WHERE stage = ?'),
    findFramework: sqlite.prepare('SELECT id FROM competency_frameworks WHERE tenant_id = ? AND case_identifier = ?'),
    // Each staged item's row: the competency of the framework with its identifier, else a new one.
    match: sqlite.prepare(
      `UPDATE temp.case_stage_items SET row_id = coalesce(
         (SELECT c.id FROM competencies c WHERE c.framework_id = :framework AND c.case_identifier = case_stage_items.identifier), new_id)
       WHERE stage = :stage`,
    ),
    matchParents: sqlite.prepare(
      `UPDATE temp.case_stage_items SET matched = (row_id <> new_id),
         parent_id = (SELECT p.row_id FROM temp.case_stage_items p WHERE p.stage = :stage AND p.identifier = case_stage_items.parent_identifier)
       WHERE stage = :stage`,
    ),
    // Codes may swap between items of a re-import: the rows whose code changes let go of theirs first.
    releaseCodes: sqlite.prepare(
      `UPDATE competencies SET code = char(1) || id
       WHERE id IN (SELECT s.row_id FROM temp.case_stage_items s JOIN competencies c ON c.id = s.row_id
                    WHERE s.stage = :stage AND s.matched AND c.code IS NOT s.code)`,
    ),
    update: sqlite.prepare(
      `UPDATE competencies SET code = s.code, title = s.title, description = s.description, item_type = s.item_type,
         case_uri = s.case_uri, case_last_change_at = s.case_last_change_at, case_item = s.case_item, parent_id = s.parent_id,
         updated_at = :now
       FROM temp.case_stage_items s
       WHERE s.stage = :stage AND s.matched AND competencies.id = s.row_id
         AND (competencies.code IS NOT s.code OR competencies.title IS NOT s.title OR competencies.description IS NOT s.description
           OR competencies.item_type IS NOT s.item_type OR competencies.case_uri IS NOT s.case_uri
           OR competencies.case_last_change_at IS NOT s.case_last_change_at OR competencies.case_item IS NOT s.case_item
           OR competencies.parent_id IS NOT s.parent_id)`,
    ),
    insert: sqlite.prepare(
      `INSERT INTO competencies (id, tenant_id, framework_id, parent_id, code, title, description, item_type, case_identifier, case_uri,
         case_last_change_at, case_item, mastery_threshold, created_at, updated_at)
       SELECT row_id, :tenant, :framework, parent_id, code, title, description, item_type, identifier, case_uri,
         case_last_change_at, case_item, :threshold, :now, :now
       FROM temp.case_stage_items WHERE stage = :stage AND NOT matched ORDER BY position`,
    ),
    dropFrameworkAssociations: sqlite.prepare('DELETE FROM competency_case_associations WHERE framework_id = ?'),
    insertAssociations: sqlite.prepare(
      `INSERT INTO competency_case_associations (id, tenant_id, framework_id, position, identifier, association_type, origin_identifier, destination_identifier, body)
       SELECT id, :tenant, :framework, position, identifier, association_type, origin_identifier, destination_identifier, body
       FROM temp.case_stage_associations WHERE stage = :stage ORDER BY position`,
    ),
    notInPackage: sqlite.prepare(
      `SELECT count(*) AS n FROM competencies c WHERE c.framework_id = :framework
         AND (c.case_identifier IS NULL OR NOT EXISTS (SELECT 1 FROM temp.case_stage_items s WHERE s.stage = :stage AND s.identifier = c.case_identifier))`,
    ),
    // The first staged item whose code a competency outside the package holds already.
    codeClash: sqlite.prepare(
      `SELECT s.position, s.identifier, s.code FROM temp.case_stage_items s
       JOIN competencies c ON c.framework_id = :framework AND c.code = s.code
       WHERE s.stage = :stage
         AND (c.case_identifier IS NULL OR NOT EXISTS (SELECT 1 FROM temp.case_stage_items o WHERE o.stage = :stage AND o.identifier = c.case_identifier))
       ORDER BY s.position LIMIT 1`,
    ),
  };
}

function statementsFor(sqlite: Database.Database) {
  let statements = statementsBySqlite.get(sqlite);
  if (!statements) statementsBySqlite.set(sqlite, (statements = prepareStatements(sqlite)));
  return statements;
}

const sqliteOf = (db: Db): Database.Database => (db as Db & { $client: Database.Database }).$client;

/** Runs `steps` in turns of the event loop, each turn at most about STAGE_SLICE_MS of them, each turn one transaction. */
async function inSlices(db: Db, count: number, step: (i: number) => void): Promise<void> {
  let i = 0;
  while (i < count) {
    const started = performance.now();
    inTransaction(db, () => {
      do {
        const end = Math.min(count, i + 64);
        for (; i < end; i++) step(i);
      } while (i < count && performance.now() - started < STAGE_SLICE_MS);
    });
    if (i < count) await yieldToEventLoop();
  }
}

/**
 * Imports a CASE package (the request body's bytes): read and checked off the event loop, staged in
 * turns, moved in at once. Resolves once the framework is stored; a problem is a 400 or a 422 with
 * nothing written.
 */
export async function importCasePackage(
  deps: { db: Db; clock: Clock; workers: WorkerPool },
  tenantId: string,
  userId: string,
  bytes: Uint8Array,
): Promise<ImportResult> {
  const { db, clock } = deps;
  const pkg = await readPackage(deps.workers, bytes);
  const sqlite = sqliteOf(db);
  const st = statementsFor(sqlite);
  const stage = newId();
  try {
    const items = pkg.items;
    await inSlices(db, items.length, (i) => {
      const item = items[i]!;
      st.stageItem.run(stage, item.identifier, i, newId(), item.parent, item.code, item.title, item.description, item.itemType, item.uri, item.lastChange, item.given);
    });
    const associations = pkg.associations;
    await inSlices(db, associations.length, (i) => {
      const a = associations[i]!;
      st.stageAssociation.run(stage, i, newId(), a.identifier, a.type, a.origin, a.destination, a.given);
    });
    return moveIn(db, clock, st, stage, pkg, tenantId, userId);
  } finally {
    // In a later turn, so as not to add to the moving in's.
    await yieldToEventLoop();
    st.dropItems.run(stage);
    st.dropAssociations.run(stage);
  }
}

function moveIn(
  db: Db,
  clock: Clock,
  st: ReturnType<typeof prepareStatements>,
  stage: string,
  pkg: ParsedPackage,
  tenantId: string,
  userId: string,
): ImportResult {
  const now = clock.now().toISOString();
  let frameworkId: string | undefined;
  try {
    return inTransaction(db, () => {
      const doc = pkg.document;
      const fields = {
        title: doc.title,
        description: doc.description,
        creator: doc.creator,
        version: doc.version,
        case_uri: doc.uri,
        case_last_change_at: doc.lastChange,
        case_document: doc.given,
        case_package: pkg.rest,
        updated_at: now,
      };
      const existing = st.findFramework.get(tenantId, doc.identifier) as { id: string } | undefined;
      frameworkId = existing?.id ?? newId();
      const sqlite = sqliteOf(db);
      if (existing) {
        const sets = Object.keys(fields).map((k) => `${k} = @${k}`).join(', ');
        sqlite.prepare(`UPDATE competency_frameworks SET ${sets} WHERE id = @id`).run({ ...fields, id: frameworkId });
      } else {
        const values = { ...fields, id: frameworkId, tenant_id: tenantId, case_identifier: doc.identifier, created_by: userId, created_at: now };
        const columns = Object.keys(values);
        sqlite.prepare(`INSERT INTO competency_frameworks (${columns.join(', ')}) VALUES (${columns.map((k) => `@${k}`).join(', ')})`).run(values);
      }
      const keys = { stage, framework: frameworkId };
      st.match.run(keys);
      st.matchParents.run({ stage });
      st.releaseCodes.run({ stage });
      const updated = st.update.run({ stage, now }).changes;
      const created = st.insert.run({ ...keys, tenant: tenantId, now, threshold: DEFAULT_MASTERY_THRESHOLD }).changes;
      st.dropFrameworkAssociations.run(frameworkId);
      st.insertAssociations.run({ ...keys, tenant: tenantId });
      const notInPackage = (st.notInPackage.get(keys) as { n: number }).n;
      const framework = db.select().from(competencyFrameworks).where(eq(competencyFrameworks.id, frameworkId!)).get()!;
      return { framework, isNew: !existing, created, updated, notInPackage };
    });
  } catch (err) {
    if (!isUniqueViolation(err) || frameworkId === undefined) throw err;
    // Rolled back whole; now say which item's code is taken.
    const clash = st.codeClash.get({ stage, framework: frameworkId }) as { position: number; identifier: string; code: string } | undefined;
    if (!clash) throw err;
    const path = `CFItems[${clash.position}] (identifier ${clash.identifier})`;
    const message = `humanCodingScheme ${clash.code} is already used by a competency of this framework`;
    throw unprocessable(`The CASE package is not acceptable: ${path}: ${message}; nothing was imported`, [{ path, message }]);
  }
}

// ---------------------------------------------------------------- export

/** The framework's CASE associations as imported, in the package's order. */
export function frameworkAssociations(db: Db, frameworkId: string): CaseAssociationRow[] {
  return db
    .select()
    .from(competencyCaseAssociations)
    .where(eq(competencyCaseAssociations.frameworkId, frameworkId))
    .orderBy(asc(competencyCaseAssociations.position))
    .all();
}

type Json = Record<string, unknown>;

/** A text as an import reads it (trimmed; empty is none): to tell whether a column still says what the package said. */
const read = (value: unknown): string | null => (typeof value === 'string' && value.trim() !== '' ? value.trim() : null);

/**
 * `out[field]` made to say `value` when the package's `given` said otherwise (an import would read
 * a different value): left as given otherwise. Returns whether it changed.
 */
function keep(out: Json, given: Json, field: string, value: string | null, derived: string | null, absent: 'delete' | 'empty' = 'delete'): boolean {
  if (value === derived) return false;
  if (value !== null) out[field] = value;
  else if (absent === 'empty') out[field] = '';
  else delete out[field];
  return given[field] !== out[field];
}

const parsed = (text: string | null): Json | null => (text ? (JSON.parse(text) as Json) : null);

/** The framework as a CASE 1.0 package: as it came, but for what was changed here; identifiers are the imported ones, or this server's ids. */
export function exportCasePackage(framework: FrameworkRow, rows: CompetencyRow[], associations: CaseAssociationRow[], baseUrl: string) {
  const docId = framework.caseIdentifier ?? framework.id;
  const docUri = framework.caseUri ?? `${baseUrl}/api/competencies/frameworks/${framework.id}`;
  const documentRef = { title: framework.title, identifier: docId, uri: docUri };
  const ref = (c: CompetencyRow) => ({ title: c.title, identifier: c.caseIdentifier ?? c.id, uri: c.caseUri ?? `${baseUrl}/api/competencies/${c.id}` });
  const byId = new Map(rows.map((r) => [r.id, r]));

  const givenDocument = parsed(framework.caseDocument);
  let CFDocument: Json;
  if (givenDocument) {
    const out: Json = { ...givenDocument, identifier: docId };
    let changed = keep(out, givenDocument, 'title', framework.title, read(givenDocument.title));
    changed = keep(out, givenDocument, 'creator', framework.creator, read(givenDocument.creator), 'empty') || changed;
    changed = keep(out, givenDocument, 'version', framework.version, read(givenDocument.version)) || changed;
    changed = keep(out, givenDocument, 'description', framework.description, read(givenDocument.description)) || changed;
    out.uri ??= docUri;
    out.lastChangeDateTime = changed || givenDocument.lastChangeDateTime === undefined ? framework.updatedAt : givenDocument.lastChangeDateTime;
    out.CFPackageURI ??= { ...documentRef, uri: `${baseUrl}/api/competencies/frameworks/${framework.id}/case` };
    CFDocument = out;
  } else {
    CFDocument = {
      identifier: docId,
      uri: docUri,
      creator: framework.creator ?? '',
      title: framework.title,
      lastChangeDateTime: framework.caseLastChangeAt ?? framework.updatedAt,
      ...(framework.version ? { version: framework.version } : {}),
      ...(framework.description ? { description: framework.description } : {}),
      CFPackageURI: { ...documentRef, uri: `${baseUrl}/api/competencies/frameworks/${framework.id}/case` },
    };
  }

  const CFItems = rows.map((c): Json => {
    const given = parsed(c.caseItem);
    if (!given) {
      return {
        identifier: ref(c).identifier,
        uri: ref(c).uri,
        fullStatement: c.title,
        humanCodingScheme: c.code,
        ...(c.itemType ? { CFItemType: c.itemType } : {}),
        ...(c.description ? { notes: c.description } : {}),
        CFDocumentURI: documentRef,
        lastChangeDateTime: c.caseLastChangeAt ?? c.updatedAt,
      };
    }
    const out: Json = { ...given, identifier: ref(c).identifier };
    const identifier = read(given.identifier);
    let changed = keep(out, given, 'humanCodingScheme', c.code, read(given.humanCodingScheme) ?? identifier);
    changed = keep(out, given, 'fullStatement', c.title, read(given.fullStatement)) || changed;
    changed = keep(out, given, 'notes', c.description, read(given.notes) ?? read(given.abbreviatedStatement)) || changed;
    changed = keep(out, given, 'CFItemType', c.itemType, read(given.CFItemType)) || changed;
    out.uri ??= ref(c).uri;
    out.CFDocumentURI ??= documentRef;
    out.lastChangeDateTime = changed || given.lastChangeDateTime === undefined ? c.updatedAt : given.lastChangeDateTime;
    return out;
  });

  // The tree as it is: each competency's parent's identifier (the CFDocument's for a root).
  const byIdentifier = new Map(rows.map((r) => [ref(r).identifier, r]));
  const parentOf = (c: CompetencyRow) => {
    const parent = c.parentId ? byId.get(c.parentId) : undefined;
    return parent ? ref(parent) : documentRef;
  };
  const placed = new Set<string>();
  const CFAssociations: Json[] = [];
  for (const a of associations) {
    if (a.associationType === 'isChildOf') {
      // Given while it still says what the tree says; a competency moved here gets one made below.
      const child = byIdentifier.get(a.originIdentifier);
      if (!child || parentOf(child).identifier !== a.destinationIdentifier) continue;
      placed.add(child.id);
    }
    const out = JSON.parse(a.body) as Json;
    out.identifier = a.identifier;
    CFAssociations.push(out);
  }
  for (const c of rows) {
    if (placed.has(c.id)) continue;
    const destination = parentOf(c);
    CFAssociations.push({
      identifier: associationId(ref(c).identifier, 'isChildOf', destination.identifier),
      associationType: 'isChildOf',
      originNodeURI: ref(c),
      destinationNodeURI: destination,
      CFDocumentURI: documentRef,
      lastChangeDateTime: c.caseLastChangeAt ?? c.updatedAt,
    });
  }
  return { CFDocument, CFItems, CFAssociations, ...(parsed(framework.casePackage) ?? {}) };
}
