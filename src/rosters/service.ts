// Roster imports: receive a bundle (checked as far as its central directory and manifest before
// anything is written), queue its job, list and read imports. An import is a job of kind
// `rosters.import` (src/jobs): its id is the job's, its report the job's result.
import { mkdir, rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { and, desc, eq } from 'drizzle-orm';
import { inTransaction, type Db } from '../../db/client';
import { jobs } from '../../db/schema';
import type { Actor } from '../auth/authenticator';
import type { Deps } from '../context';
import { notFound, unprocessable } from '../http/errors';
import { pageBounds, type PageQuery } from '../http/pagination';
import { receiveUpload } from '../http/upload';
import type { JobRow } from '../jobs/runner';
import { newId } from '../lib/ids';
import { selectPage } from '../lib/sql';
import { parseManifest, RosterFailure, type FileMode } from './csv';
import type { ImportMode } from './reader';
import { rosterFileKeys, rosterFiles, type RosterFileKey } from './records';
import { BundleRefused, openBundle, readSmallEntry, ZIP_LIMITS } from './zip';

export const ROSTER_IMPORT_KIND = 'rosters.import';

/** The largest bundle an admin may send (the zip as uploaded). */
export const MAX_BUNDLE_BYTES = 50 * 1024 * 1024;

/** OneRoster versions whose CSV files this server reads. */
const ONEROSTER_VERSIONS = new Set(['1.1', '1.2']);

/** What the job needs, stored as its input. */
export interface ImportInput {
  path: string;
  filename: string;
  bytes: number;
  sha256: string;
  mode: ImportMode;
  files: Record<RosterFileKey, FileMode>;
}

export interface InspectedBundle {
  mode: ImportMode;
  files: Record<RosterFileKey, FileMode>;
}

/**
 * What can be told of a bundle without reading its data: the zip's central directory (zip.ts) and
 * manifest.csv (the OneRoster version, and each file's mode). Throws BundleRefused or RosterFailure.
 */
export async function inspectBundle(path: string): Promise<InspectedBundle> {
  const bundle = await openBundle(path);
  try {
    if (!bundle.files.has('manifest.csv')) throw new BundleRefused('The zip has no manifest.csv at its root');
    const manifest = parseManifest(await readSmallEntry(bundle, 'manifest.csv', ZIP_LIMITS.maxManifestBytes));
    const version = manifest.get('oneroster.version');
    if (!version || !ONEROSTER_VERSIONS.has(version)) {
      throw new RosterFailure({
        file: 'manifest.csv',
        line: null,
        field: 'oneroster.version',
        message: `oneroster.version must be 1.2 (or 1.1), not ${version === undefined ? 'missing' : JSON.stringify(version)}`,
      });
    }
    const files = {} as Record<RosterFileKey, FileMode>;
    for (const key of rosterFileKeys) {
      const property = `file.${key}`;
      const value = manifest.get(property) ?? 'absent';
      if (value !== 'bulk' && value !== 'delta' && value !== 'absent') {
        throw new RosterFailure({ file: 'manifest.csv', line: null, field: property, message: `${property} must be bulk, delta or absent, not ${JSON.stringify(value)}` });
      }
      files[key] = value;
      if (value !== 'absent' && !bundle.files.has(rosterFiles[key].file)) {
        throw new BundleRefused(`manifest.csv lists ${rosterFiles[key].file} as ${value}, but the zip has no ${rosterFiles[key].file} at its root`);
      }
    }
    const modes = new Set(Object.values(files).filter((m) => m !== 'absent'));
    if (modes.size === 0) throw new BundleRefused(`manifest.csv lists none of ${rosterFileKeys.map((k) => rosterFiles[k].file).join(', ')} as bulk or delta`);
    if (modes.size > 1) throw new BundleRefused('manifest.csv mixes bulk and delta files; send one bundle of each');
    return { mode: [...modes][0] as ImportMode, files };
  } finally {
    bundle.close();
  }
}

/** A refusal of the bundle as a 422 naming its reason. */
export function refusal(err: unknown): unknown {
  if (err instanceof BundleRefused) return unprocessable(err.message, [{ path: 'file', message: err.message }]);
  if (err instanceof RosterFailure) return unprocessable(err.message, [{ path: err.problem.field ? `file/${err.problem.file}/${err.problem.field}` : `file/${err.problem.file}`, message: err.message }]);
  return err;
}

/** Receives the bundle, checks it and queues its import; nothing is written when it is refused. */
export async function startImport(deps: Deps, actor: Actor, request: Request): Promise<JobRow> {
  const uploads = join(deps.config.dataDir, 'uploads');
  const { file } = await receiveUpload(request, { dir: uploads, maxBytes: MAX_BUNDLE_BYTES });
  const kept = join(deps.config.dataDir, 'rosters', `${newId()}.zip`);
  try {
    let inspected: InspectedBundle;
    try {
      inspected = await inspectBundle(file.path);
    } catch (err) {
      throw refusal(err);
    }
    await mkdir(join(deps.config.dataDir, 'rosters'), { recursive: true });
    await rename(file.path, kept);
    const input: ImportInput = { path: kept, filename: file.filename, bytes: file.bytes, sha256: file.sha256, ...inspected };
    return inTransaction(deps.db, (tx) => deps.jobs.enqueue(tx, { kind: ROSTER_IMPORT_KIND, tenantId: actor.tenantId, input, createdBy: actor.userId }));
  } catch (err) {
    await file.discard();
    await rm(kept, { force: true });
    throw err;
  }
}

/** One import of the tenant, or 404 (another tenant's is not found either). */
export function getImport(db: Db, tenantId: string, id: string): JobRow {
  const row = db
    .select()
    .from(jobs)
    .where(and(eq(jobs.id, id), eq(jobs.tenantId, tenantId), eq(jobs.kind, ROSTER_IMPORT_KIND)))
    .get();
  if (!row) throw notFound('Roster import');
  return row;
}

/** The tenant's imports, newest first. */
export function listImports(db: Db, tenantId: string, page: PageQuery) {
  const where = and(eq(jobs.tenantId, tenantId), eq(jobs.kind, ROSTER_IMPORT_KIND));
  return selectPage(db, jobs, where, [desc(jobs.createdAt), desc(jobs.id)], pageBounds(page));
}
