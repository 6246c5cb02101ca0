// Course files through the API: uploads streamed to disk and stored once by content, the type
// sniffed from the bytes, downloads with ETag and ranges, renames and moves, and every refusal
// leaving nothing behind (no row, no blob, no temporary file).
import { createHash } from 'node:crypto';
import { existsSync, readdirSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { courseFiles } from '../db/schema';
import { blobPath, uploadsDir } from '../src/files/blobs';
import { expectProblem, makeTestApp, type TestApp, type TestUser } from './helpers/app';
import { insertCourse, insertEnrollment } from './helpers/courses';
import { multipartBody } from './helpers/multipart';

const PDF = Buffer.concat([Buffer.from('%PDF-1.4\n%\xe2\xe3\xcf\xd3\n'), Buffer.alloc(3000, 0x41), Buffer.from('\n%%EOF\n')]);
const PNG = Buffer.from('89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c4890000000d4944415478da63f8cfc0f01f0005000201a6d1f1760000000049454e44ae426082', 'hex');
const sha256 = (bytes: Uint8Array | string) => createHash('sha256').update(bytes).digest('hex');

let t: TestApp;
let instructor: TestUser;
let student: TestUser;
let courseId: string;

beforeAll(async () => {
  t = await makeTestApp({ config: { fileMaxBytes: 64 * 1024 } });
  instructor = await t.newUser();
  student = await t.newUser();
  const course = insertCourse(t.db, { tenantId: t.defaultTenantId, createdBy: instructor.user.id, status: 'published' });
  courseId = course.id;
  insertEnrollment(t.db, { tenantId: t.defaultTenantId, courseId, userId: instructor.user.id, role: 'instructor' });
  insertEnrollment(t.db, { tenantId: t.defaultTenantId, courseId, userId: student.user.id, role: 'student' });
});
afterAll(() => t.close());

async function upload(file: { name: string; content: string | Uint8Array; type?: string }, fields: Record<string, string> = {}, as: TestUser = instructor) {
  return t.call('POST', `/api/courses/${courseId}/files`, { as, ...(await multipartBody(file, fields)) });
}

const blobsOnDisk = () => t.db.select().from(courseFiles).all().filter((f) => existsSync(blobPath(t.config.dataDir, f.sha256))).length;
const incoming = () => (existsSync(uploadsDir(t.config.dataDir)) ? readdirSync(uploadsDir(t.config.dataDir)) : []);

describe('course files', () => {
  it('stores an upload with the type sniffed from its bytes, and lists it to members', async () => {
    const res = await upload({ name: 'syllabus.pdf', content: PDF, type: 'text/html' }, { folder: '/Week 1//Readings/' });
    expect(res.status, res.text).toBe(201);
    expect(res.body).toMatchObject({ name: 'syllabus.pdf', folder: 'Week 1/Readings', content_type: 'application/pdf', bytes: PDF.length, sha256: sha256(PDF), course_id: courseId });
    expect(res.headers.get('location')).toBe(`/api/files/${res.body.id}`);
    expect(incoming()).toEqual([]);

    const list = await t.call('GET', `/api/courses/${courseId}/files`, { as: student });
    expect(list.status).toBe(200);
    expect(list.body.data.map((f: { id: string }) => f.id)).toContain(res.body.id);
    const inFolder = await t.call('GET', `/api/courses/${courseId}/files?folder=${encodeURIComponent('Week 1/Readings')}`, { as: student });
    expect(inFolder.body.data.map((f: { name: string }) => f.name)).toEqual(['syllabus.pdf']);
    const elsewhere = await t.call('GET', `/api/courses/${courseId}/files?folder=Week%202`, { as: student });
    expect(elsewhere.body.data).toEqual([]);

    const meta = await t.call('GET', `/api/files/${res.body.id}`, { as: student });
    expect(meta.status).toBe(200);
    expect(meta.body).toEqual(res.body);
  });

  it('serves the bytes with their type, nosniff, a strong ETag and single ranges', async () => {
    const created = await upload({ name: 'diagram.png', content: PNG, type: 'application/octet-stream' });
    expect(created.body.content_type).toBe('image/png');
    const path = `/api/files/${created.body.id}/content`;
    const whole = await t.app.request(path, { headers: { Authorization: `Bearer ${student.token}` } });
    expect(whole.status).toBe(200);
    expect(Buffer.from(await whole.arrayBuffer())).toEqual(PNG);
    expect(whole.headers.get('content-type')).toBe('image/png');
    expect(whole.headers.get('content-length')).toBe(String(PNG.length));
    expect(whole.headers.get('x-content-type-options')).toBe('nosniff');
    expect(whole.headers.get('content-disposition')).toBe('inline; filename="diagram.png"');
    expect(whole.headers.get('content-security-policy')).toContain('sandbox');
    const etag = whole.headers.get('etag');
    expect(etag).toBe(`"${sha256(PNG)}"`);

    const notModified = await t.app.request(path, { headers: { Authorization: `Bearer ${student.token}`, 'If-None-Match': etag! } });
    expect(notModified.status).toBe(304);

    const part = await t.app.request(path, { headers: { Authorization: `Bearer ${student.token}`, Range: 'bytes=8-15' } });
    expect(part.status).toBe(206);
    expect(part.headers.get('content-range')).toBe(`bytes 8-15/${PNG.length}`);
    expect(Buffer.from(await part.arrayBuffer())).toEqual(PNG.subarray(8, 16));
    const tail = await t.app.request(path, { headers: { Authorization: `Bearer ${student.token}`, Range: 'bytes=-4' } });
    expect(Buffer.from(await tail.arrayBuffer())).toEqual(PNG.subarray(PNG.length - 4));
    // A stale If-Range gets the whole file; several ranges too.
    const stale = await t.app.request(path, { headers: { Authorization: `Bearer ${student.token}`, Range: 'bytes=0-3', 'If-Range': '"other"' } });
    expect(stale.status).toBe(200);
    const several = await t.app.request(path, { headers: { Authorization: `Bearer ${student.token}`, Range: 'bytes=0-1,4-5' } });
    expect(several.status).toBe(200);

    const beyond = await t.call('GET', path, { as: student, headers: { Range: `bytes=${PNG.length}-` } });
    expectProblem(beyond, 416, 'range_not_satisfiable');
    expect(beyond.headers.get('content-range')).toBe(`bytes */${PNG.length}`);
  });

  it('never serves HTML or SVG as something a browser runs: text, downloaded', async () => {
    for (const [name, content] of [
      ['page.html', '<html><body><script>alert(1)</script></body></html>'],
      ['image.svg', '<svg xmlns="http://www.w3.org/2000/svg" onload="alert(1)"></svg>'],
    ] as const) {
      const created = await upload({ name, content, type: name.endsWith('svg') ? 'image/svg+xml' : 'text/html' });
      expect(created.status, created.text).toBe(201);
      expect(created.body.content_type).toBe('text/plain; charset=utf-8');
      const res = await t.app.request(`/api/files/${created.body.id}/content`, { headers: { Authorization: `Bearer ${student.token}` } });
      expect(res.headers.get('content-type')).toBe('text/plain; charset=utf-8');
      expect(res.headers.get('content-disposition')).toMatch(/^attachment; filename="/);
      expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    }
    const binary = await upload({ name: 'data.bin', content: new Uint8Array([0, 1, 2, 3, 255]) });
    expect(binary.body.content_type).toBe('application/octet-stream');
  });

  it('keeps the same bytes once, and removes them with the last file that has them', async () => {
    const content = `shared ${Date.now()}`;
    const one = await upload({ name: 'one.txt', content });
    const two = await upload({ name: 'two.txt', content }, { folder: 'copies' });
    expect(one.body.sha256).toBe(two.body.sha256);
    const blob = blobPath(t.config.dataDir, one.body.sha256);
    expect(existsSync(blob)).toBe(true);
    expect((await t.call('DELETE', `/api/files/${one.body.id}`, { as: instructor })).status).toBe(204);
    expect(existsSync(blob)).toBe(true);
    const gone = await t.call('GET', `/api/files/${one.body.id}`, { as: instructor });
    expectProblem(gone, 404, 'not_found');
    expect((await t.call('DELETE', `/api/files/${two.body.id}`, { as: instructor })).status).toBe(204);
    expect(existsSync(blob)).toBe(false);
  });

  it('renames and moves a file, refusing a taken name or a folder that climbs out', async () => {
    const a = await upload({ name: 'a.txt', content: 'a' });
    const b = await upload({ name: 'b.txt', content: 'b' });
    const renamed = await t.call('PATCH', `/api/files/${a.body.id}`, { as: instructor, body: { name: 'notes.txt', folder: 'Week 2' } });
    expect(renamed.status, renamed.text).toBe(200);
    expect(renamed.body).toMatchObject({ name: 'notes.txt', folder: 'Week 2' });
    const taken = await t.call('PATCH', `/api/files/${b.body.id}`, { as: instructor, body: { name: 'notes.txt', folder: 'Week 2' } });
    expectProblem(taken, 409, 'conflict');
    const climbing = await t.call('PATCH', `/api/files/${b.body.id}`, { as: instructor, body: { folder: 'x/../../etc' } });
    expectProblem(climbing, 422, 'validation_failed');
    const empty = await t.call('PATCH', `/api/files/${b.body.id}`, { as: instructor, body: {} });
    expect(empty.status).toBe(400);
    expect((await t.call('GET', `/api/files/${b.body.id}`, { as: instructor })).body).toMatchObject({ name: 'b.txt', folder: '' });

    const again = await upload({ name: 'b.txt', content: 'other bytes' });
    expectProblem(again, 409, 'conflict');
    expect(incoming()).toEqual([]);
  });

  it('refuses what is not an upload, or too large, and keeps nothing', async () => {
    const rows = t.db.select().from(courseFiles).all().length;
    const blobs = blobsOnDisk();
    const tooLarge = await upload({ name: 'big.bin', content: new Uint8Array(64 * 1024 + 1) });
    expectProblem(tooLarge, 413, 'payload_too_large');
    const exactly = await upload({ name: 'exact.bin', content: new Uint8Array(64 * 1024).fill(7) });
    expect(exactly.status, exactly.text).toBe(201);
    await t.call('DELETE', `/api/files/${exactly.body.id}`, { as: instructor });

    const json = await t.call('POST', `/api/courses/${courseId}/files`, { as: instructor, body: { name: 'x' } });
    expectProblem(json, 415, 'unsupported_media_type');
    const noFile = await t.call('POST', `/api/courses/${courseId}/files`, { as: instructor, ...(await multipartBody(undefined, { folder: 'x' })) });
    expectProblem(noFile, 422, 'validation_failed');
    const badFolder = await upload({ name: 'x.txt', content: 'x' }, { folder: '../outside' });
    expectProblem(badFolder, 422, 'validation_failed');
    const { rawBody, headers } = await multipartBody({ name: 'cut.txt', content: 'y'.repeat(5000) });
    const cut = await t.call('POST', `/api/courses/${courseId}/files`, { as: instructor, rawBody: rawBody.subarray(0, 3000), headers });
    expectProblem(cut, 400, 'bad_request');

    expect(t.db.select().from(courseFiles).all().length).toBe(rows);
    expect(blobsOnDisk()).toBe(blobs);
    expect(incoming()).toEqual([]);
  });

  it('answers 404 for a missing course or file, and for a file of a deleted course', async () => {
    const created = await upload({ name: 'left.txt', content: 'left behind' });
    const missing = '0192f6a4-7b1c-7c3e-8e5a-3f1d2c4b5a69';
    expectProblem(await t.call('GET', `/api/courses/${missing}/files`, { as: instructor }), 404, 'not_found');
    expectProblem(await t.call('GET', `/api/files/${missing}/content`, { as: instructor }), 404, 'not_found');
    const deleted = await t.call('DELETE', `/api/courses/${courseId}`, { as: instructor });
    expect(deleted.status, deleted.text).toBe(204);
    const res = await t.call('GET', `/api/files/${created.body.id}`, { as: instructor });
    expectProblem(res, 404, 'not_found');
    expect(res.body.detail).toBe('File not found');
  });
});
