// Hostile packages: whatever the upload can check is refused at once with a 422 naming the reason
// (size, not a zip, entry count, paths leaving the package, links, duplicate names, declared sizes,
// no manifest, a manifest with a DOCTYPE or entities, not well-formed, not CC); what only inflating
// tells (a zip bomb, an entry larger than its header says) fails the job with the reason. Either
// way nothing is written and no file is left. A server killed in the middle of an import (before
// or while it writes) leaves the job failed and nothing half-imported; so does a failure while it
// writes, and a draft whose clean-up a dying process left unfinished is removed at the next start.
import { existsSync } from 'node:fs';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { courseFiles, courseModules, courses, documents, enrollments, importDrafts, importMappings, jobs } from '../db/schema';
import { blobPath } from '../src/files/blobs';
import { importJobs } from '../src/imports/job';
import { JobRunner } from '../src/jobs/runner';
import { countRows } from '../src/lib/sql';
import { createLogger } from '../src/logger';
import type { WorkerPool } from '../src/lib/worker-pool';
import { expectProblem, makeTestApp, type TestApp, type TestUser } from './helpers/app';
import { fullCartridge, importForm, manifestXml, page, rawZip, zipOf } from './helpers/cartridges';

const MAX = 1024 * 1024;
let t: TestApp;
let dataDir: string;
let instructor: TestUser;

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'imports-hostile-'));
  t = await makeTestApp({ config: { dataDir, importMaxBytes: MAX } });
  instructor = await t.newUser({ name: 'Hostile Instructor' });
});
afterAll(async () => {
  await t.close();
  await rm(dataDir, { recursive: true, force: true });
});

const written = () => ({
  courses: countRows(t.db, courses),
  modules: countRows(t.db, courseModules),
  documents: countRows(t.db, documents),
  mappings: countRows(t.db, importMappings),
});
const leftFiles = async () => (await readdir(join(dataDir, 'imports')).catch(() => [] as string[])).sort();

async function upload(bytes: Buffer) {
  const form = await importForm(bytes);
  return t.call('POST', '/api/imports', { as: instructor, rawBody: form.rawBody, headers: form.headers });
}

const simpleManifest = (extra = '') =>
  manifestXml({
    version: '1.3',
    title: 'Simple',
    items: [{ identifier: 'm1', title: 'Module', children: [{ identifier: 'i1', title: 'Page', ref: 'r1' }] }],
    resources: [{ identifier: 'r1', type: 'webcontent', href: 'p.html', files: ['p.html'] }],
    extra,
  });

/**
 * Uploads a cartridge whose import "dies" while the documents' states are being built: the course,
 * its files and its documents' rows are written (in their slices) by then, the rest never comes.
 * Gives the upload's answer and the draft left behind.
 */
async function importDyingWhileWriting() {
  const res = await upload(await fullCartridge('1.3'));
  expect(res.status, res.text).toBe(202);
  let writing!: () => void;
  const reached = new Promise<void>((resolve) => (writing = resolve));
  const dyingWorkers = {
    run: (module: URL, input: { kind: string }) => {
      if (input.kind !== 'states') return t.deps.workers.run(module, input);
      setImmediate(writing);
      return new Promise(() => undefined);
    },
  } as unknown as WorkerPool;
  const dying = new JobRunner({ db: t.db, clock: t.clock, logger: createLogger('silent') });
  dying.register('imports.cartridge', importJobs({ ...t.deps, workers: dyingWorkers })['imports.cartridge']!);
  expect(await dying.runDue()).toBe(1);
  await reached;
  const draft = t.db.select().from(importDrafts).where(eq(importDrafts.jobId, res.body.id)).get()!;
  expect(draft).toBeDefined();
  return { res, draft };
}

/** Refused at upload with 422 and a detail naming `reason`; nothing queued, written or left on disk. */
async function expectRefusedAtUpload(bytes: Buffer, reason: RegExp) {
  const before = { ...written(), jobs: countRows(t.db, jobs) };
  const res = await upload(bytes);
  expectProblem(res, 422, 'validation_failed');
  expect(res.body.detail).toMatch(reason);
  expect({ ...written(), jobs: countRows(t.db, jobs) }).toEqual(before);
  expect(await leftFiles()).toEqual([]);
}

/** Accepted (202), then the job fails naming `reason`; nothing written or left on disk. */
async function expectFailedJob(bytes: Buffer, reason: RegExp) {
  const before = written();
  const res = await upload(bytes);
  expect(res.status, res.text).toBe(202);
  await t.deps.jobs.drain();
  const job = await t.call('GET', `/api/imports/${res.body.id}`, { as: instructor });
  expect(job.body).toMatchObject({ status: 'failed', course_id: null });
  expect(job.body.error).toMatch(reason);
  expect(written()).toEqual(before);
  expect(await leftFiles()).toEqual([]);
}

describe('hostile packages refused at upload (422)', () => {
  it('a file over IMPORT_MAX_BYTES', async () => {
    await expectRefusedAtUpload(Buffer.alloc(MAX + 1, 1), /IMPORT_MAX_BYTES/);
  });

  it('a file that is not a zip', async () => {
    await expectRefusedAtUpload(Buffer.from('this is not a zip file at all'), /not a zip file/);
  });

  it('no imsmanifest.xml', async () => {
    await expectRefusedAtUpload(await zipOf({ 'p.html': page('P', '<p>x</p>') }), /no imsmanifest\.xml/);
  });

  it('a path with ".."', async () => {
    await expectRefusedAtUpload(rawZip([{ name: 'imsmanifest.xml', data: Buffer.from(simpleManifest()) }, { name: 'pages/../../evil.html', data: Buffer.from('x') }]), /leaves the package/);
  });

  it('an absolute path', async () => {
    await expectRefusedAtUpload(rawZip([{ name: 'imsmanifest.xml', data: Buffer.from(simpleManifest()) }, { name: '/etc/cron.d/evil', data: Buffer.from('x') }]), /absolute path/);
  });

  it('a symbolic link', async () => {
    await expectRefusedAtUpload(
      rawZip([{ name: 'imsmanifest.xml', data: Buffer.from(simpleManifest()) }, { name: 'p.html', data: Buffer.from('/etc/passwd'), mode: 0o120777 }]),
      /is a link/,
    );
  });

  it('the same entry name twice', async () => {
    await expectRefusedAtUpload(
      rawZip([
        { name: 'imsmanifest.xml', data: Buffer.from(simpleManifest()) },
        { name: 'p.html', data: Buffer.from('<p>one</p>') },
        { name: 'p.html', data: Buffer.from('<p>two</p>') },
      ]),
      /appears twice/,
    );
  });

  it('more than 10,000 entries', async () => {
    const entries = [{ name: 'imsmanifest.xml', data: Buffer.from(simpleManifest()) }];
    for (let n = 0; n < 10_000; n++) entries.push({ name: `f/${n}`, data: Buffer.alloc(0) });
    await expectRefusedAtUpload(rawZip(entries), /10001 entries, more than the 10000 allowed/);
  });

  it('a directory that declares more than 2 GiB', async () => {
    await expectRefusedAtUpload(
      rawZip([
        { name: 'imsmanifest.xml', data: Buffer.from(simpleManifest()) },
        { name: 'big.bin', data: Buffer.from('x'), deflate: true, declaredSize: 3 * 1024 ** 3 },
      ]),
      /more than 2147483648 bytes/,
    );
  });

  it('an XXE manifest (DOCTYPE with an external entity)', async () => {
    const xxe = simpleManifest().replace('<?xml version="1.0" encoding="UTF-8"?>', '<?xml version="1.0"?><!DOCTYPE manifest [<!ENTITY xxe SYSTEM "file:///etc/passwd">]>').replace('<title>Page</title>', '<title>&xxe;</title>');
    await expectRefusedAtUpload(await zipOf({ 'imsmanifest.xml': xxe, 'p.html': page('P', 'x') }), /DOCTYPE/);
  });

  it('entity declarations without a DOCTYPE line (billion laughs pieces)', async () => {
    const laughs = simpleManifest().replace('<manifest ', '<!ENTITY lol "lol"><manifest ');
    await expectRefusedAtUpload(await zipOf({ 'imsmanifest.xml': laughs, 'p.html': page('P', 'x') }), /declares entities/);
  });

  it('a manifest that is not well-formed', async () => {
    await expectRefusedAtUpload(await zipOf({ 'imsmanifest.xml': '<manifest><organizations></manifest>', 'p.html': 'x' }), /not well-formed/);
  });

  it('a manifest that is not Common Cartridge', async () => {
    await expectRefusedAtUpload(await zipOf({ 'imsmanifest.xml': '<?xml version="1.0"?><manifest xmlns="http://www.imsglobal.org/xsd/imscp_v1p1"/>' }), /not a Common Cartridge manifest/);
  });
});

describe('hostile packages that fail the job, writing nothing', () => {
  it('a zip bomb: an entry inflating far past 100:1', async () => {
    const bomb = rawZip([
      { name: 'imsmanifest.xml', data: Buffer.from(simpleManifest()) },
      { name: 'p.html', data: Buffer.alloc(64 * 1024 * 1024, 0x20), deflate: true },
    ]);
    expect(bomb.length).toBeLessThan(MAX);
    await expectFailedJob(bomb, /inflates more than 100:1/);
  });

  it('an entry whose declared size lies (larger than its header says)', async () => {
    const body = Buffer.from(page('P', '<p>' + 'lorem ipsum '.repeat(200) + '</p>'));
    await expectFailedJob(
      rawZip([
        { name: 'imsmanifest.xml', data: Buffer.from(simpleManifest()) },
        { name: 'p.html', data: body, deflate: true, declaredSize: 100 },
      ]),
      /size in the zip's directory is wrong/,
    );
  });
});

describe('a server killed during an import', () => {
  it('leaves the job failed once its lease runs out, nothing half-imported, and no file behind', async () => {
    const before = written();
    const res = await upload(await fullCartridge('1.3'));
    expect(res.status, res.text).toBe(202);

    // The process that took the job "dies" after planning: its next worker task never returns.
    let planned!: () => void;
    const afterScan = new Promise<void>((resolve) => (planned = resolve));
    const dyingWorkers = {
      run: (module: URL, input: { kind: string }) => {
        if (input.kind === 'scan') return t.deps.workers.run(module, input).finally(() => setImmediate(planned));
        return new Promise(() => undefined);
      },
    } as unknown as WorkerPool;
    const dying = new JobRunner({ db: t.db, clock: t.clock, logger: createLogger('silent') });
    dying.register('imports.cartridge', importJobs({ ...t.deps, workers: dyingWorkers })['imports.cartridge']!);
    expect(await dying.runDue()).toBe(1);
    await afterScan;
    const running = t.db.select().from(jobs).where(eq(jobs.id, res.body.id)).get()!;
    expect(running).toMatchObject({ status: 'running', attempts: 1 });
    expect(running.progressDone).toBeGreaterThan(0);

    // The restarted server's runner: nothing to do while the lease holds, the job failed after it.
    await t.deps.jobs.drain();
    expect(t.db.select().from(jobs).where(eq(jobs.id, res.body.id)).get()!.status).toBe('running');
    t.clock.advance(121_000);
    await t.deps.jobs.drain();
    const job = await t.call('GET', `/api/imports/${res.body.id}`, { as: instructor });
    expect(job.body).toMatchObject({ status: 'failed', course_id: null });
    expect(job.body.error).toMatch(/interrupted/);
    expect(written()).toEqual(before);
    expect(await leftFiles()).toEqual([]);
  });

  it('killed while it writes a new course: the course stays hidden meanwhile, and is removed whole once the job is failed', async () => {
    const before = { ...written(), files: countRows(t.db, courseFiles), enrollments: countRows(t.db, enrollments) };
    const { res, draft } = await importDyingWhileWriting();
    expect(countRows(t.db, courseFiles)).toBe(before.files + 1);
    expect(countRows(t.db, documents)).toBeGreaterThan(before.documents);
    // Hidden meanwhile: not a course anyone can open or list, and no document anyone can see.
    expectProblem(await t.call('GET', `/api/courses/${draft.courseId}`, { as: instructor }), 404, 'not_found');
    expect((await t.call('GET', '/api/courses?per_page=100', { as: instructor })).body.data.map((c: { id: string }) => c.id)).not.toContain(draft.courseId);
    expect((await t.call('GET', '/api/documents?per_page=100', { as: instructor })).body.data).toEqual([]);
    const blob = t.db.select().from(courseFiles).where(eq(courseFiles.courseId, draft.courseId)).get()!;
    expect(existsSync(blobPath(dataDir, blob.sha256))).toBe(true);

    // The restarted server fails the job once its lease runs out, and removes the draft whole.
    t.clock.advance(121_000);
    await t.deps.jobs.drain();
    const job = await t.call('GET', `/api/imports/${res.body.id}`, { as: instructor });
    expect(job.body).toMatchObject({ status: 'failed', course_id: null });
    expect(job.body.error).toMatch(/interrupted/);
    expect({ ...written(), files: countRows(t.db, courseFiles), enrollments: countRows(t.db, enrollments) }).toEqual(before);
    expect(t.db.select().from(courses).where(eq(courses.id, draft.courseId)).get()).toBeUndefined();
    expect(countRows(t.db, importDrafts)).toBe(0);
    expect(existsSync(blobPath(dataDir, blob.sha256))).toBe(false);
    expect(await leftFiles()).toEqual([]);
  });
});

describe('a server killed while it discards a failed import', () => {
  it('has the draft removed whole when the job runner starts again', async () => {
    const before = { ...written(), files: countRows(t.db, courseFiles) };
    const { res, draft } = await importDyingWhileWriting();
    // The job was failed, and the process died before its clean-up ended: the draft is still here.
    t.db.update(jobs).set({ status: 'failed', error: 'interrupted', lockedUntil: null }).where(eq(jobs.id, res.body.id)).run();

    const restarted = new JobRunner({ db: t.db, clock: t.clock, logger: createLogger('silent') });
    restarted.register('imports.cartridge', importJobs(t.deps)['imports.cartridge']!);
    restarted.start(60_000);
    try {
      await vi.waitFor(() => expect(countRows(t.db, importDrafts)).toBe(0), { timeout: 20_000, interval: 50 });
    } finally {
      await restarted.stop();
    }
    expect(t.db.select().from(courses).where(eq(courses.id, draft.courseId)).get()).toBeUndefined();
    expect({ ...written(), files: countRows(t.db, courseFiles) }).toEqual(before);
  });
});

describe('an import that fails while it writes a new course', () => {
  it('leaves nothing behind: the slices written so far are removed before the job is failed', async () => {
    const before = { ...written(), files: countRows(t.db, courseFiles), enrollments: countRows(t.db, enrollments) };
    const res = await upload(await fullCartridge('1.2'));
    expect(res.status, res.text).toBe(202);
    const failingWorkers = {
      run: (module: URL, input: { kind: string }) => (input.kind === 'states' ? Promise.reject(new Error('no states today')) : t.deps.workers.run(module, input)),
    } as unknown as WorkerPool;
    const runner = new JobRunner({ db: t.db, clock: t.clock, logger: createLogger('silent') });
    runner.register('imports.cartridge', importJobs({ ...t.deps, workers: failingWorkers })['imports.cartridge']!);
    await runner.drain();
    const job = await t.call('GET', `/api/imports/${res.body.id}`, { as: instructor });
    expect(job.body).toMatchObject({ status: 'failed', course_id: null });
    expect(job.body.error).toMatch(/no states today/);
    expect({ ...written(), files: countRows(t.db, courseFiles), enrollments: countRows(t.db, enrollments) }).toEqual(before);
    expect(countRows(t.db, importDrafts)).toBe(0);
    expect(await leftFiles()).toEqual([]);
  });
});
