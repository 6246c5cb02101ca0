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
// Off the event loop, so that one tenant's import never stalls the others: a large package is read and checked
// in a worker thread (case-parse.ts); its rows are then staged in TEMP tables of the connection, a
// few milliseconds a turn (other requests run between the turns; nothing of the main database is
// written yet, so they read the framework as it was); then one transaction moves them in with a
// handful of set-wise statements. A package that does not hold together is a 422 naming the
// offending item, and nothing is written: the moving in is one transaction, rolled back whole.
import { and, asc, eq, sql } from 'drizzle-orm';
import type Database from 'better-sqlite3';
import { clientOf, inTransaction, type Db } from '../../db/client';
import { competencyCaseAssociations, competencyCaseItems, competencyFrameworks, DEFAULT_MASTERY_THRESHOLD } from '../../db/schema';
import type { Clock } from '../lib/clock';
import { badRequest, conflict, unprocessable } from '../http/errors';
import { yieldAfterWrites, yieldToEventLoop } from '../lib/event-loop';
import { newId } from '../lib/ids';
import { preparedFor } from '../lib/prepared';
import { isUniqueViolation } from '../lib/sql';
import type { WorkerPool } from '../lib/worker-pool';
import { ASSOCIATION_FIELDS, associationId, FieldReader, ITEM_FIELDS, readCasePackage, type PackedPackage, type ParseOutcome } from './case-parse';
import { frameworkVersion, frameworkWritten } from './writes';
import type { CompetencyRow, FrameworkRow } from './service';

export type CaseAssociationRow = typeof competencyCaseAssociations.$inferSelect;

const PARSE_TASK = new URL('./case-parse.ts', import.meta.url);

/** Bodies up to this size are read on the event loop (a worker's hand-over would cost more than it saves). */
const INLINE_MAX_BYTES = 256 * 1024;
/** How long one turn of staging may work before letting other work run. */
const SLICE_MS = 4;
/**
 * Rows the clean-up deletes a turn: a row kept as given holds its whole CFItem or CFAssociation,
 * in up to four indexes; 500 a turn took 15-30 ms of CPU (bench/case-import.ts, profiled).
 */
const DELETE_SLICE = 100;
/** Stagings an import tries before giving up when the framework keeps being written meanwhile. */
const ATTEMPTS = 3;

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
async function readPackage(workers: WorkerPool, bytes: Uint8Array): Promise<PackedPackage> {
  const outcome: ParseOutcome =
    bytes.byteLength <= INLINE_MAX_BYTES
      ? readCasePackage(bytes)
      : // Moved, not copied: the body is not read here again.
        await workers.run<ParseOutcome>(PARSE_TASK, { bytes }, [bytes.buffer as ArrayBuffer]);
  if (outcome.ok) return outcome.pkg;
  throw outcome.status === 400 ? badRequest(outcome.detail, outcome.errors) : unprocessable(outcome.detail, outcome.errors);
}

// ---------------------------------------------------------------- statements

/** The competencies an import creates or changes, staged on this connection only (TEMP). */
const STAGE_TABLE = `CREATE TEMP TABLE IF NOT EXISTS case_stage_items (
    stage TEXT NOT NULL, position INTEGER NOT NULL, identifier TEXT NOT NULL,
    row_id TEXT NOT NULL, matched INTEGER NOT NULL, code_changed INTEGER NOT NULL, parent_changed INTEGER NOT NULL,
    texts_changed INTEGER NOT NULL,
    parent_id TEXT, code TEXT NOT NULL, title TEXT NOT NULL, description TEXT, item_type TEXT,
    case_uri TEXT, case_last_change_at TEXT,
    PRIMARY KEY (stage, position)
  ) WITHOUT ROWID`;
/**
 * The staged rows whose code or parent changes, each with what the move-in sets (covering; named
 * by the statements, as the planner has no statistics of TEMP tables): a re-import that moves 500
 * items of 20,000 would otherwise scan all 20,000 wide rows for them (3-5 ms), inside the
 * transaction. The new and the retitled are read from the table itself: often all of them, better
 * scanned than looked up one by one.
 */
const STAGE_INDEXES = [
  'CREATE INDEX IF NOT EXISTS temp.case_stage_codes ON case_stage_items (stage, position, row_id, code, code_changed) WHERE code_changed',
  'CREATE INDEX IF NOT EXISTS temp.case_stage_parents ON case_stage_items (stage, position, row_id, parent_id, parent_changed) WHERE parent_changed',
];

/** The framework's columns an import sets. */
const FRAMEWORK_FIELDS = ['title', 'description', 'creator', 'version', 'case_uri', 'case_last_change_at', 'case_document', 'case_package', 'case_import_id', 'updated_at'] as const;
const FRAMEWORK_CREATED = ['id', 'tenant_id', 'case_identifier', 'created_by', 'created_at', ...FRAMEWORK_FIELDS] as const;

const statementsBySqlite = new WeakMap<Database.Database, ReturnType<typeof prepareStatements>>();

function prepareStatements(sqlite: Database.Database) {
  sqlite.exec(STAGE_TABLE);
  for (const index of STAGE_INDEXES) sqlite.exec(index);
  return {
    findFramework: sqlite.prepare('SELECT id FROM competency_frameworks WHERE tenant_id = ? AND case_identifier = ?'),
    current: sqlite.prepare(
      'SELECT id, parent_id, code, title, description, item_type, case_uri, case_last_change_at FROM competencies WHERE framework_id = ? AND case_identifier = ?',
    ),
    stageItem: sqlite.prepare(
      `INSERT INTO temp.case_stage_items (stage, position, identifier, row_id, matched, code_changed, parent_changed, texts_changed, parent_id, code, title, description, item_type, case_uri, case_last_change_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    ),
    keepItem: sqlite.prepare('INSERT INTO competency_case_items (framework_id, import_id, identifier, tenant_id, body) VALUES (?, ?, ?, ?, ?)'),
    keepAssociation: sqlite.prepare(
      `INSERT INTO competency_case_associations (id, tenant_id, framework_id, import_id, position, identifier, association_type, origin_identifier, destination_identifier, body)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    ),
    dropStage: sqlite.prepare('DELETE FROM temp.case_stage_items WHERE stage = ?'),
    updateFramework: sqlite.prepare(`UPDATE competency_frameworks SET ${FRAMEWORK_FIELDS.map((k) => `${k} = @${k}`).join(', ')} WHERE id = @id`),
    insertFramework: sqlite.prepare(`INSERT INTO competency_frameworks (${FRAMEWORK_CREATED.join(', ')}) VALUES (${FRAMEWORK_CREATED.map((k) => `@${k}`).join(', ')})`),
    // The statements below that may change many rows are OR ROLLBACK: a failure ends the whole
    // transaction (as the move-in would anyway), so SQLite keeps no statement journal for them,
    // which would copy every page they change before changing it (a quarter of the texts' UPDATE).
    // Codes may swap between items of a re-import: the rows whose code changes let go of theirs first.
    releaseCodes: sqlite.prepare(
      `UPDATE OR ROLLBACK competencies SET code = char(1) || id
       WHERE id IN (SELECT row_id FROM temp.case_stage_items INDEXED BY case_stage_codes WHERE stage = ? AND code_changed)`,
    ),
    // Only the columns that changed, each with its own statement: an UPDATE rewrites every index
    // that holds a column it sets, changed or not. Each sets updated_at of the rows it changes.
    updateTexts: sqlite.prepare(
      `UPDATE OR ROLLBACK competencies SET title = s.title, description = s.description, item_type = s.item_type, case_uri = s.case_uri,
         case_last_change_at = s.case_last_change_at, updated_at = :now
       FROM temp.case_stage_items s WHERE s.stage = :stage AND s.texts_changed AND competencies.id = s.row_id`,
    ),
    // Not OR ROLLBACK: a code taken meanwhile is the import's usual failure, a 422 (moveIn).
    updateCodes: sqlite.prepare(
      `UPDATE competencies SET code = s.code, updated_at = :now FROM temp.case_stage_items s INDEXED BY case_stage_codes
       WHERE s.stage = :stage AND s.code_changed AND competencies.id = s.row_id`,
    ),
    updateParents: sqlite.prepare(
      `UPDATE OR ROLLBACK competencies SET parent_id = s.parent_id, updated_at = :now FROM temp.case_stage_items s INDEXED BY case_stage_parents
       WHERE s.stage = :stage AND s.parent_changed AND competencies.id = s.row_id`,
    ),
    insert: sqlite.prepare(
      `INSERT INTO competencies (id, tenant_id, framework_id, parent_id, code, title, description, item_type, case_identifier, case_uri,
         case_last_change_at, mastery_threshold, created_at, updated_at)
       SELECT row_id, :tenant, :framework, parent_id, code, title, description, item_type, identifier, case_uri,
         case_last_change_at, :threshold, :now, :now
       FROM temp.case_stage_items WHERE stage = :stage AND NOT matched ORDER BY position`,
    ),
    count: sqlite.prepare('SELECT count(*) AS n FROM competencies WHERE framework_id = ?'),
    // The first staged item whose code a competency outside the package holds already.
    codeClash: sqlite.prepare(
      `SELECT s.position, s.identifier, s.code FROM temp.case_stage_items s
       JOIN competencies c ON c.framework_id = :framework AND c.code = s.code AND c.id <> s.row_id
       WHERE s.stage = :stage ORDER BY s.position LIMIT 1`,
    ),
    // Clean-up, a slice at a time: one import's rows (it did not move in), or every other import's (it did).
    dropImportItems: sqlite.prepare(
      `DELETE FROM competency_case_items WHERE rowid IN
         (SELECT rowid FROM competency_case_items WHERE framework_id = :framework AND import_id = :importId LIMIT ${DELETE_SLICE})`,
    ),
    // Every other import's: those before it, then any after it, each a range of the index that leads
    // with (framework_id, import_id). `import_id <> ?` is no range: each turn would scan past the rows
    // kept (tens of thousands) to find the next ones to delete, ever longer as they go.
    dropOtherItems: (['<', '>'] as const).map((op) =>
      sqlite.prepare(
        `DELETE FROM competency_case_items WHERE rowid IN
           (SELECT rowid FROM competency_case_items WHERE framework_id = :framework AND import_id ${op} :importId LIMIT ${DELETE_SLICE})`,
      ),
    ),
    dropImportAssociations: sqlite.prepare(
      `DELETE FROM competency_case_associations WHERE id IN
         (SELECT id FROM competency_case_associations INDEXED BY competency_case_associations_framework_idx
          WHERE framework_id = :framework AND import_id = :importId LIMIT ${DELETE_SLICE})`,
    ),
    dropOtherAssociations: (['<', '>'] as const).map((op) =>
      sqlite.prepare(
        `DELETE FROM competency_case_associations WHERE id IN
           (SELECT id FROM competency_case_associations INDEXED BY competency_case_associations_framework_idx
            WHERE framework_id = :framework AND import_id ${op} :importId LIMIT ${DELETE_SLICE})`,
      ),
    ),
  };
}

type Statements = ReturnType<typeof prepareStatements>;

function statementsFor(sqlite: Database.Database): Statements {
  let statements = statementsBySqlite.get(sqlite);
  if (!statements) statementsBySqlite.set(sqlite, (statements = prepareStatements(sqlite)));
  return statements;
}

/** The framework as the import's answer gives it, read in the move-in. */
const frameworkById = (db: Db) =>
  preparedFor(db, 'case:framework', () =>
    db.select().from(competencyFrameworks).where(eq(competencyFrameworks.id, sql.placeholder('id'))).prepare(),
  );

/** Runs `step(i)` for i < count in turns of the event loop, each about SLICE_MS long and one transaction. */
async function inSlices(db: Db, count: number, step: (i: number) => void): Promise<void> {
  let i = 0;
  while (i < count) {
    const started = performance.now();
    inTransaction(db, () => {
      do {
        const end = Math.min(count, i + 32);
        for (; i < end; i++) step(i);
      } while (i < count && performance.now() - started < SLICE_MS);
    });
    if (i < count) await yieldAfterWrites(db);
  }
}

/** Deletes rows `DELETE_SLICE` a turn until none is left. */
async function deleteInSlices(db: Db, statement: Database.Statement, params: Record<string, unknown>): Promise<void> {
  while (statement.run(params).changes > 0) await yieldAfterWrites(db);
}

// ---------------------------------------------------------------- import

interface Staged {
  frameworkId: string;
  existed: boolean;
  /** The framework's write counter when staging began (writes.ts). */
  version: number;
  /** Its competencies when staging began: the same at the move-in, which checks `version`. */
  held: number;
  created: number;
  updated: number;
  /** Of the updated, how many change their texts, code, parent: the move-in runs only the statements that have rows. */
  changes: { texts: number; codes: number; parents: number };
}

interface Current {
  id: string;
  parent_id: string | null;
  code: string;
  title: string;
  description: string | null;
  item_type: string | null;
  case_uri: string | null;
  case_last_change_at: string | null;
}

/**
 * Stages the package a few rows a turn: the competencies it creates or changes in the TEMP table
 * (compared with the competencies as they are now), its CFItems and CFAssociations as given under
 * this import's id (not the framework's until the move-in says so).
 */
async function stage(db: Db, st: Statements, importId: string, pkg: PackedPackage, tenantId: string): Promise<Staged> {
  const existing = st.findFramework.get(tenantId, pkg.document.identifier) as { id: string } | undefined;
  const frameworkId = existing?.id ?? newId();
  const version = frameworkVersion(db, frameworkId);
  const held = existing ? (st.count.get(frameworkId) as { n: number }).n : 0;
  // Pass 1: each item's fields, its row (the competency with its identifier, or a new one), its given body kept.
  const n = pkg.itemCount;
  const fields: (string | null)[][] = new Array(n);
  const currents: (Current | undefined)[] = new Array(n);
  const rowIdOf = new Map<string, string>();
  const reader = new FieldReader(pkg.items);
  await inSlices(db, n, (i) => {
    const f: (string | null)[] = [];
    for (let k = 0; k < ITEM_FIELDS; k++) f.push(reader.next());
    const identifier = f[0]!;
    const current = existing ? (st.current.get(frameworkId, identifier) as Current | undefined) : undefined;
    st.keepItem.run(frameworkId, importId, identifier, tenantId, f[8]);
    f[8] = null;
    fields[i] = f;
    currents[i] = current;
    rowIdOf.set(identifier, current?.id ?? newId());
  });
  // Pass 2: what is new or changed, staged for the move-in.
  let created = 0;
  let updated = 0;
  const changes = { texts: 0, codes: 0, parents: 0 };
  await inSlices(db, n, (i) => {
    const [identifier, uri, code, title, description, itemType, lastChange, parent] = fields[i]!;
    const current = currents[i];
    const parentId = parent ? rowIdOf.get(parent)! : null;
    const codeChanged = current !== undefined && current.code !== code;
    const parentChanged = current !== undefined && current.parent_id !== parentId;
    const textChanged =
      current !== undefined &&
      (current.title !== title ||
        current.description !== description ||
        current.item_type !== itemType ||
        current.case_uri !== uri ||
        current.case_last_change_at !== lastChange);
    if (current && !codeChanged && !parentChanged && !textChanged) return;
    if (current) updated++;
    else created++;
    if (textChanged) changes.texts++;
    if (codeChanged) changes.codes++;
    if (parentChanged) changes.parents++;
    const flags = [current ? 1 : 0, codeChanged ? 1 : 0, parentChanged ? 1 : 0, textChanged ? 1 : 0];
    st.stageItem.run(importId, i, identifier, rowIdOf.get(identifier!)!, ...flags, parentId, code, title, description, itemType, uri, lastChange);
  });
  const associations = new FieldReader(pkg.associations);
  await inSlices(db, pkg.associationCount, (i) => {
    const [identifier, type, origin, destination, body] = Array.from({ length: ASSOCIATION_FIELDS }, () => associations.next());
    st.keepAssociation.run(newId(), tenantId, frameworkId, importId, i, identifier, type, origin, destination, body);
  });
  return { frameworkId, existed: existing !== undefined, version, held, created, updated, changes };
}

/**
 * Moves the staged import in, in one transaction: the framework row (now naming this import's
 * items and associations as given) and the competencies staged. Null when the framework was
 * written since staging began (the staging no longer says what changes).
 */
function moveIn(db: Db, clock: Clock, st: Statements, importId: string, pkg: PackedPackage, staged: Staged, tenantId: string, userId: string): ImportResult | null {
  const now = clock.now().toISOString();
  const { frameworkId } = staged;
  try {
    return inTransaction(db, () => {
      const doc = pkg.document;
      const existing = st.findFramework.get(tenantId, doc.identifier) as { id: string } | undefined;
      if ((existing?.id ?? null) !== (staged.existed ? frameworkId : null) || frameworkVersion(db, frameworkId) !== staged.version) return null;
      const fields: Record<(typeof FRAMEWORK_FIELDS)[number], string | null> = {
        title: doc.title,
        description: doc.description,
        creator: doc.creator,
        version: doc.version,
        case_uri: doc.uri,
        case_last_change_at: doc.lastChange,
        case_document: doc.given,
        case_package: pkg.rest,
        case_import_id: importId,
        updated_at: now,
      };
      if (existing) st.updateFramework.run({ ...fields, id: frameworkId });
      else st.insertFramework.run({ ...fields, id: frameworkId, tenant_id: tenantId, case_identifier: doc.identifier, created_by: userId, created_at: now });
      const { changes } = staged;
      if (changes.codes > 0) st.releaseCodes.run(importId);
      if (changes.texts > 0) st.updateTexts.run({ stage: importId, now });
      if (changes.codes > 0) st.updateCodes.run({ stage: importId, now });
      if (changes.parents > 0) st.updateParents.run({ stage: importId, now });
      if (staged.created > 0) st.insert.run({ stage: importId, framework: frameworkId, tenant: tenantId, now, threshold: DEFAULT_MASTERY_THRESHOLD });
      frameworkWritten(db, frameworkId);
      const framework = frameworkById(db).get({ id: frameworkId })!;
      const held = staged.held + staged.created;
      return { framework, isNew: !existing, created: staged.created, updated: staged.updated, notInPackage: held - pkg.itemCount };
    });
  } catch (err) {
    if (!isUniqueViolation(err)) throw err;
    // Rolled back whole; now say which item's code is taken.
    const clash = st.codeClash.get({ stage: importId, framework: frameworkId }) as { position: number; identifier: string; code: string } | undefined;
    if (!clash) throw err;
    const path = `CFItems[${clash.position}] (identifier ${clash.identifier})`;
    const message = `humanCodingScheme ${clash.code} is already used by a competency of this framework`;
    throw unprocessable(`The CASE package is not acceptable: ${path}: ${message}; nothing was imported`, [{ path, message }]);
  }
}

/**
 * Imports a CASE package (the request body's bytes): read and checked off the event loop, staged a
 * few milliseconds a turn, moved in at once. Resolves once the framework is stored; a problem is a
 * 400 or a 422 with nothing changed.
 */
export async function importCasePackage(
  deps: { db: Db; clock: Clock; workers: WorkerPool },
  tenantId: string,
  userId: string,
  bytes: Uint8Array,
): Promise<ImportResult> {
  const { db, clock } = deps;
  const pkg = await readPackage(deps.workers, bytes);
  const st = statementsFor(clientOf(db));
  for (let attempt = 1; ; attempt++) {
    const importId = newId();
    let result: ImportResult | null = null;
    let frameworkId: string | undefined;
    try {
      const staged = await stage(db, st, importId, pkg, tenantId);
      frameworkId = staged.frameworkId;
      result = moveIn(db, clock, st, importId, pkg, staged, tenantId, userId);
    } finally {
      await yieldToEventLoop();
      st.dropStage.run(importId);
      // What this import kept as given goes when it did not move in; the earlier imports' when it did.
      if (frameworkId !== undefined) {
        const params = { framework: frameworkId, importId };
        for (const statement of result ? st.dropOtherItems : [st.dropImportItems]) await deleteInSlices(db, statement, params);
        for (const statement of result ? st.dropOtherAssociations : [st.dropImportAssociations]) await deleteInSlices(db, statement, params);
      }
    }
    if (result) return result;
    if (attempt >= ATTEMPTS) throw conflict('The framework was changed during the import each time it was tried; nothing was imported; try again');
  }
}

// ---------------------------------------------------------------- export

/** What the framework's last import kept as given: its associations in the package's order, and its items' bodies by identifier. */
export function keptAsGiven(db: Db, framework: FrameworkRow): { associations: CaseAssociationRow[]; items: Map<string, string> } {
  const importId = framework.caseImportId;
  if (!importId) return { associations: [], items: new Map() };
  const associations = db
    .select()
    .from(competencyCaseAssociations)
    .where(and(eq(competencyCaseAssociations.frameworkId, framework.id), eq(competencyCaseAssociations.importId, importId)))
    .orderBy(asc(competencyCaseAssociations.position))
    .all();
  const items = db
    .select({ identifier: competencyCaseItems.identifier, body: competencyCaseItems.body })
    .from(competencyCaseItems)
    .where(and(eq(competencyCaseItems.frameworkId, framework.id), eq(competencyCaseItems.importId, importId)))
    .all();
  return { associations, items: new Map(items.map((i) => [i.identifier, i.body])) };
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
export function exportCasePackage(framework: FrameworkRow, rows: CompetencyRow[], kept: ReturnType<typeof keptAsGiven>, baseUrl: string) {
  const { associations } = kept;
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
    const given = parsed(c.caseIdentifier !== null ? (kept.items.get(c.caseIdentifier) ?? null) : null);
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
