// DOCUMENT_MAX_BYTES applies to documents made from templates: a rendered result past the limit
// is 413 and creates nothing (no document, no template_id recorded anywhere); one within it is
// made. Here the limit is 4 KiB.
import { count, eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { documents } from '../db/schema';
import { expectProblem, makeTestApp, type TestApp, type TestUser } from './helpers/app';
import { contentOf } from './helpers/documents';

const LIMIT = 4 * 1024;

let t: TestApp;
let member: TestUser;

beforeAll(async () => {
  t = await makeTestApp({ config: { documentMaxBytes: LIMIT } });
  member = await t.newUser();
});
afterAll(() => t.close());

const documentsTotal = async () => (await t.call('GET', '/api/documents', { as: member })).body.pagination.total as number;

describe('instantiate past DOCUMENT_MAX_BYTES', () => {
  it('is 413 and creates nothing when the rendered Markdown is too large; a result within the limit is made', async () => {
    // The body is small; the rendered result grows with the value, repeated four times.
    const created = await t.call('POST', '/api/templates', {
      as: t.admin,
      body: { name: 'Echo', body: '# {{text}}\n\n{{text}}\n\n{{text}}\n\n{{text}}\n', variables: [{ name: 'text', required: true }] },
    });
    expect(created.status, created.text).toBe(201);
    const tpl = created.body;
    const before = await documentsTotal();

    const big = 'a'.repeat(LIMIT / 2);
    // Rendering alone stores nothing and is not limited by DOCUMENT_MAX_BYTES.
    const rendered = await t.call('POST', `/api/templates/${tpl.id}/render`, { as: member, body: { variables: { text: big } } });
    expect(rendered.status, rendered.text).toBe(200);
    expect(rendered.body.content.length).toBeGreaterThan(LIMIT);

    const res = await t.call('POST', `/api/templates/${tpl.id}/instantiate`, { as: member, body: { title: 'Too big', variables: { text: big } } });
    expectProblem(res, 413, 'payload_too_large');
    expect(res.body.detail).toMatch(/above the limit of 4096 bytes \(DOCUMENT_MAX_BYTES\)/);
    expect(res.headers.get('location')).toBeNull();
    expect(await documentsTotal()).toBe(before);
    expect(t.db.select({ n: count() }).from(documents).where(eq(documents.templateId, tpl.id)).get()!.n).toBe(0);

    const fits = await t.call('POST', `/api/templates/${tpl.id}/instantiate`, { as: member, body: { title: 'Fits', variables: { text: 'small' } } });
    expect(fits.status, fits.text).toBe(201);
    expect(fits.body.template_id).toBe(tpl.id);
    expect(await contentOf(t, member, fits.body.id)).toBe('# small\n\nsmall\n\nsmall\n\nsmall\n');
    expect(await documentsTotal()).toBe(before + 1);
  });
});
