// IMS CASE 1.0 (Competencies and Academic Standards Exchange) packages: import a framework from a
// package's CFDocument, CFItems and CFAssociations, and export a framework in the same shape.
//
// Mapping: CFDocument → framework (identifier kept as case_identifier; title, creator, version,
// description); CFItem → competency (identifier kept; humanCodingScheme → code, or the identifier
// when an item has none; fullStatement → title; abbreviatedStatement/notes → description;
// CFItemType → item_type); an `isChildOf` association (origin = the child item, destination = the
// parent item, or the CFDocument for a top-level item) → parent_id. Other association types are
// kept out of the tree and ignored.
//
// A re-import finds the framework by CFDocument.identifier and each competency by its item's
// identifier, and updates them in place (alignments stay). Items that left the package are kept
// (an import never deletes what instructors may have aligned); the answer counts them. A package
// that does not hold together is a 422 naming the offending item; nothing is written then: the
// whole import is one transaction.
import { and, eq } from 'drizzle-orm';
import { createHash } from 'node:crypto';
import { inTransaction, type Db } from '../../db/client';
import { competencies, competencyFrameworks, DEFAULT_MASTERY_THRESHOLD } from '../../db/schema';
import type { Clock } from '../lib/clock';
import { unprocessable } from '../http/errors';
import { textRefusal } from '../http/text';
import { newId } from '../lib/ids';
import { isUniqueViolation } from '../lib/sql';
import { MAX_COMPETENCY_DEPTH, type CompetencyRow, type FrameworkRow } from './service';

export interface CaseNodeRef {
  identifier: string;
  uri?: string;
  title?: string;
}

interface ParsedItem {
  identifier: string;
  uri: string | null;
  code: string;
  title: string;
  description: string | null;
  itemType: string | null;
  lastChange: string | null;
  parent: string | null;
}

interface ParsedPackage {
  document: { identifier: string; uri: string | null; title: string; creator: string | null; version: string | null; description: string | null; lastChange: string | null };
  items: ParsedItem[];
}

const MAX_TEXT = 10_000;

const fail = (path: string, message: string): never => {
  throw unprocessable(`The CASE package is not acceptable: ${path}: ${message}; nothing was imported`, [{ path, message }]);
};

/**
 * A text field of the package, under the rules of REST bodies (src/http/text.ts): free text
 * (statements, notes, descriptions) may hold tabs and line breaks, names and identifiers not.
 */
function text(value: unknown, path: string, required: boolean, max = MAX_TEXT, kind: 'single-line' | 'multi-line' = 'single-line'): string | null {
  if (value === undefined || value === null || (typeof value === 'string' && value.trim() === '')) {
    if (required) fail(path, 'is required');
    return null;
  }
  if (typeof value !== 'string') return fail(path, 'must be a string');
  if (value.length > max) fail(path, `is longer than ${max} characters`);
  const problem = textRefusal(value, { multiLine: kind === 'multi-line' });
  if (problem) fail(path, problem);
  return value.trim();
}

const freeText = (value: unknown, path: string, required: boolean, max = MAX_TEXT) => text(value, path, required, max, 'multi-line');

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Validates the whole package before anything is written; the first problem is a 422 naming the item. */
export function parseCasePackage(body: unknown): ParsedPackage {
  if (!isObject(body)) return fail('(body)', 'must be a CASE package object');
  const doc = body.CFDocument;
  if (!isObject(doc)) return fail('CFDocument', 'is required and must be an object');
  const document = {
    identifier: text(doc.identifier, 'CFDocument.identifier', true, 200)!,
    uri: text(doc.uri, 'CFDocument.uri', false, 2000),
    title: text(doc.title, 'CFDocument.title', true, 500)!,
    creator: text(doc.creator, 'CFDocument.creator', false, 500),
    version: text(doc.version, 'CFDocument.version', false, 100),
    description: freeText(doc.description, 'CFDocument.description', false),
    lastChange: text(doc.lastChangeDateTime, 'CFDocument.lastChangeDateTime', false, 100),
  };
  if (!Array.isArray(body.CFItems)) return fail('CFItems', 'is required and must be an array');
  if (body.CFAssociations !== undefined && !Array.isArray(body.CFAssociations)) return fail('CFAssociations', 'must be an array');
  if (body.CFItems.length > 20_000) fail('CFItems', 'holds more than 20000 items');

  const items = new Map<string, ParsedItem>();
  const codes = new Map<string, string>();
  body.CFItems.forEach((raw: unknown, i: number) => {
    const at = `CFItems[${i}]`;
    if (!isObject(raw)) return fail(at, 'must be an object');
    const identifier = text(raw.identifier, `${at}.identifier`, true, 200)!;
    const named = `${at} (identifier ${identifier})`;
    if (identifier === document.identifier) fail(named, 'uses the CFDocument identifier');
    if (items.has(identifier)) fail(named, 'repeats an identifier of an earlier item');
    const code = text(raw.humanCodingScheme, `${named}.humanCodingScheme`, false, 200) ?? identifier;
    const other = codes.get(code.toLowerCase());
    if (other) fail(named, `humanCodingScheme ${code} is already used by item ${other}`);
    codes.set(code.toLowerCase(), identifier);
    items.set(identifier, {
      identifier,
      uri: text(raw.uri, `${named}.uri`, false, 2000),
      code,
      title: freeText(raw.fullStatement, `${named}.fullStatement`, true, 2000)!,
      description: freeText(raw.notes, `${named}.notes`, false) ?? freeText(raw.abbreviatedStatement, `${named}.abbreviatedStatement`, false),
      itemType: text(raw.CFItemType, `${named}.CFItemType`, false, 200),
      lastChange: text(raw.lastChangeDateTime, `${named}.lastChangeDateTime`, false, 100),
      parent: null,
    });
  });

  const associations = (body.CFAssociations ?? []) as unknown[];
  associations.forEach((raw, i) => {
    const at = `CFAssociations[${i}]`;
    if (!isObject(raw)) return fail(at, 'must be an object');
    const type = text(raw.associationType, `${at}.associationType`, true, 100);
    if (type !== 'isChildOf') return;
    const origin = raw.originNodeURI;
    const destination = raw.destinationNodeURI;
    const id = typeof raw.identifier === 'string' ? ` (identifier ${raw.identifier})` : '';
    if (!isObject(origin)) return fail(`${at}${id}.originNodeURI`, 'is required and must be an object');
    if (!isObject(destination)) return fail(`${at}${id}.destinationNodeURI`, 'is required and must be an object');
    const child = text(origin.identifier, `${at}${id}.originNodeURI.identifier`, true, 200)!;
    const parent = text(destination.identifier, `${at}${id}.destinationNodeURI.identifier`, true, 200)!;
    const item = items.get(child);
    if (!item) return fail(`${at}${id}.originNodeURI`, `names ${child}, which is not an item of the package`);
    if (parent !== document.identifier && !items.has(parent))
      return fail(`${at}${id}.destinationNodeURI`, `names ${parent}, which is neither an item nor the CFDocument of the package`);
    if (parent === child) return fail(`${at}${id}`, `makes item ${child} its own parent`);
    const newParent = parent === document.identifier ? null : parent;
    if (item.parent !== null && item.parent !== newParent) return fail(`${at}${id}`, `gives item ${child} a second parent`);
    item.parent = newParent;
  });

  // A cycle of isChildOf would leave a part of the tree hanging from nothing.
  const state = new Map<string, 'walking' | 'done'>();
  for (const item of items.values()) {
    const path: ParsedItem[] = [];
    for (let at: ParsedItem | undefined = item; at && state.get(at.identifier) !== 'done'; at = at.parent ? items.get(at.parent) : undefined) {
      if (state.get(at.identifier) === 'walking') fail(`CFItems (identifier ${at.identifier})`, 'is its own ancestor through isChildOf associations');
      state.set(at.identifier, 'walking');
      path.push(at);
    }
    for (const p of path) state.set(p.identifier, 'done');
  }
  // Levels, each item's from its parent's: walked up to the first item whose level is known.
  const levels = new Map<string, number>();
  for (const item of items.values()) {
    const path: ParsedItem[] = [];
    let at: ParsedItem | undefined = item;
    while (at && !levels.has(at.identifier)) {
      path.push(at);
      at = at.parent ? items.get(at.parent) : undefined;
    }
    let level = at ? levels.get(at.identifier)! : 0;
    for (let i = path.length - 1; i >= 0; i--) {
      levels.set(path[i]!.identifier, ++level);
      if (level > MAX_COMPETENCY_DEPTH) {
        const index = body.CFItems.findIndex((raw: unknown) => isObject(raw) && raw.identifier === path[i]!.identifier);
        fail(`CFItems[${index}] (identifier ${path[i]!.identifier})`, `sits deeper than ${MAX_COMPETENCY_DEPTH} levels through isChildOf associations`);
      }
    }
  }
  return { document, items: [...items.values()] };
}

export interface ImportResult {
  framework: FrameworkRow;
  /** The package's CFDocument was not imported before: the framework was created. */
  isNew: boolean;
  created: number;
  updated: number;
  /** Competencies from an earlier import that this package no longer lists: kept as they were. */
  notInPackage: number;
}

export function importCasePackage(db: Db, clock: Clock, tenantId: string, userId: string, body: unknown): ImportResult {
  const pkg = parseCasePackage(body);
  const now = clock.now().toISOString();
  return inTransaction(db, (tx) => {
    const fields = {
      title: pkg.document.title,
      description: pkg.document.description,
      creator: pkg.document.creator,
      version: pkg.document.version,
      caseUri: pkg.document.uri,
      caseLastChangeAt: pkg.document.lastChange,
      updatedAt: now,
    };
    const existing = tx
      .select()
      .from(competencyFrameworks)
      .where(and(eq(competencyFrameworks.tenantId, tenantId), eq(competencyFrameworks.caseIdentifier, pkg.document.identifier)))
      .get();
    const framework = existing
      ? tx.update(competencyFrameworks).set(fields).where(eq(competencyFrameworks.id, existing.id)).returning().get()!
      : tx
          .insert(competencyFrameworks)
          .values({ id: newId(), tenantId, caseIdentifier: pkg.document.identifier, createdBy: userId, createdAt: now, ...fields })
          .returning()
          .get();

    const current = tx.select().from(competencies).where(eq(competencies.frameworkId, framework.id)).all();
    const byCase = new Map(current.filter((c) => c.caseIdentifier !== null).map((c) => [c.caseIdentifier!, c]));
    const idOf = new Map<string, string>();
    const matched = pkg.items.filter((i) => byCase.has(i.identifier)).map((i) => byCase.get(i.identifier)!.id);
    // Codes may swap between items of a re-import: the matched rows let go of theirs first.
    for (let i = 0; i < matched.length; i += 500) {
      const slice = matched.slice(i, i + 500);
      for (const id of slice) tx.update(competencies).set({ code: `\u0001${id}` }).where(eq(competencies.id, id)).run();
    }
    let created = 0;
    let updated = 0;
    pkg.items.forEach((item, i) => {
      const values = {
        code: item.code,
        title: item.title,
        description: item.description,
        itemType: item.itemType,
        caseUri: item.uri,
        caseLastChangeAt: item.lastChange,
      };
      const row = byCase.get(item.identifier);
      try {
        if (row) {
          const wantedParent = item.parent ? (byCase.get(item.parent)?.id ?? null) : null;
          const moved = item.parent ? wantedParent === null || wantedParent !== row.parentId : row.parentId !== null;
          const changed = moved || (Object.keys(values) as (keyof typeof values)[]).some((k) => values[k] !== row[k]);
          tx.update(competencies).set({ ...values, ...(changed ? { updatedAt: now } : {}) }).where(eq(competencies.id, row.id)).run();
          if (changed) updated++;
          idOf.set(item.identifier, row.id);
        } else {
          const id = newId();
          tx.insert(competencies)
            .values({
              id,
              tenantId,
              frameworkId: framework.id,
              caseIdentifier: item.identifier,
              masteryThreshold: DEFAULT_MASTERY_THRESHOLD,
              createdAt: now,
              updatedAt: now,
              ...values,
            })
            .run();
          idOf.set(item.identifier, id);
          created++;
        }
      } catch (err) {
        if (isUniqueViolation(err))
          fail(`CFItems[${i}] (identifier ${item.identifier})`, `humanCodingScheme ${item.code} is already used by a competency of this framework`);
        throw err;
      }
    });
    // Parents once every item has its row.
    const currentParent = new Map(current.map((c) => [c.id, c.parentId]));
    for (const item of pkg.items) {
      const id = idOf.get(item.identifier)!;
      const parentId = item.parent ? idOf.get(item.parent)! : null;
      if (currentParent.get(id) === parentId) continue;
      tx.update(competencies).set({ parentId }).where(eq(competencies.id, id)).run();
    }
    const listed = new Set(idOf.values());
    return { framework, isNew: !existing, created, updated, notInPackage: current.filter((c) => !listed.has(c.id)).length };
  });
}

/** A stable identifier for an exported association (the same child and parent give the same one). */
function associationId(child: string, parent: string): string {
  const h = createHash('sha1').update(`${child}\u0000${parent}`).digest('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-5${h.slice(13, 16)}-${((parseInt(h.slice(16, 18), 16) & 0x3f) | 0x80).toString(16)}${h.slice(18, 20)}-${h.slice(20, 32)}`;
}

/** The framework as a CASE 1.0 package; identifiers are the imported ones, or this server's ids. */
export function exportCasePackage(framework: FrameworkRow, rows: CompetencyRow[], baseUrl: string) {
  const docId = framework.caseIdentifier ?? framework.id;
  const docUri = framework.caseUri ?? `${baseUrl}/api/competencies/frameworks/${framework.id}`;
  const documentRef = { title: framework.title, identifier: docId, uri: docUri };
  const ref = (c: CompetencyRow) => ({ title: c.title, identifier: c.caseIdentifier ?? c.id, uri: c.caseUri ?? `${baseUrl}/api/competencies/${c.id}` });
  const byId = new Map(rows.map((r) => [r.id, r]));
  const lastChange = (at: string | null, fallback: string) => at ?? fallback;
  return {
    CFDocument: {
      identifier: docId,
      uri: docUri,
      creator: framework.creator ?? '',
      title: framework.title,
      lastChangeDateTime: lastChange(framework.caseLastChangeAt, framework.updatedAt),
      ...(framework.version ? { version: framework.version } : {}),
      ...(framework.description ? { description: framework.description } : {}),
      CFPackageURI: { ...documentRef, uri: `${baseUrl}/api/competencies/frameworks/${framework.id}/case` },
    },
    CFItems: rows.map((c) => ({
      identifier: ref(c).identifier,
      uri: ref(c).uri,
      fullStatement: c.title,
      humanCodingScheme: c.code,
      ...(c.itemType ? { CFItemType: c.itemType } : {}),
      ...(c.description ? { notes: c.description } : {}),
      CFDocumentURI: documentRef,
      lastChangeDateTime: lastChange(c.caseLastChangeAt, c.updatedAt),
    })),
    CFAssociations: rows.map((c) => {
      const parent = c.parentId ? byId.get(c.parentId) : undefined;
      const destination = parent ? ref(parent) : documentRef;
      return {
        identifier: associationId(ref(c).identifier, destination.identifier),
        associationType: 'isChildOf' as const,
        originNodeURI: ref(c),
        destinationNodeURI: destination,
        CFDocumentURI: documentRef,
        lastChangeDateTime: lastChange(c.caseLastChangeAt, c.updatedAt),
      };
    }),
  };
}

