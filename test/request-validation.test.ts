// How requests are refused: a missing parameter or field names itself the same way on every route
// ("to is required"), and the gradebook says that an offering_id is a course id.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectProblem, makeTestApp, type TestApp } from './helpers/app';

let t: TestApp;
beforeAll(async () => {
  t = await makeTestApp();
});
afterAll(() => t.close());

/** The field errors of a 400 validation problem, as `path: message`. */
async function fieldErrors(method: string, path: string, body?: unknown): Promise<string[]> {
  const res = await t.call(method, path, { as: t.admin, body });
  expectProblem(res, 400, 'validation_failed', `${method} ${path}`);
  return (res.body.errors as { path: string; message: string }[]).map((e) => `${e.path}: ${e.message}`);
}

describe('a missing required value', () => {
  it('names itself, in the query, whatever its type (a union, a string, an enum)', async () => {
    const doc = await t.call('POST', '/api/documents', { as: t.admin, body: { title: 'Diffed' } });
    expect(doc.status).toBe(201);
    expect(await fieldErrors('GET', `/api/documents/${doc.body.id}/diff?from=current`)).toEqual(['to: to is required']);
    expect(await fieldErrors('GET', `/api/documents/${doc.body.id}/diff`)).toEqual(['from: from is required', 'to: to is required']);
    expect(await fieldErrors('GET', '/api/users/search')).toEqual(['q: q is required']);
    expect(await fieldErrors('GET', '/api/documents/suggestions')).toEqual(['q: q is required']);
  });

  it('names itself in a body, nested fields included, while a wrong value keeps its own message', async () => {
    expect(await fieldErrors('POST', '/api/users', { name: 'No email' })).toEqual(['email: email is required']);
    expect(await fieldErrors('POST', '/api/groups', {})).toEqual(['name: name is required']);
    const doc = await t.call('POST', '/api/documents', { as: t.admin, body: { title: 'Shared' } });
    expect(await fieldErrors('POST', `/api/documents/${doc.body.id}/collaborators`, { principal_type: 'user' })).toEqual([
      'principal_id: principal_id is required',
      'role: role is required',
    ]);
    const course = await t.call('POST', '/api/courses', { as: t.admin, body: { title: 'Graded' } });
    expect(
      await fieldErrors('POST', `/api/gradebook/offerings/${course.body.id}/assignments`, { label: 'Quiz', grade_metadata: { weight: 1 } }),
    ).toEqual(['grade_metadata.score_maximum: score_maximum is required']);
    // Present but wrong: the schema's own message.
    const wrong = await fieldErrors('POST', '/api/users', { email: 'not-an-email', name: 'X' });
    expect(wrong).toHaveLength(1);
    expect(wrong[0]).toMatch(/^email: /);
    expect(wrong[0]).not.toMatch(/required/);
    expect(await fieldErrors('POST', '/api/groups', { name: null })).not.toEqual(['name: name is required']);
  });
});

describe('the gradebook offering_id', () => {
  it('is described as a course id on every route that takes it', async () => {
    const doc = (await t.call('GET', '/api/openapi.json')).body;
    let seen = 0;
    for (const [path, ops] of Object.entries(doc.paths as Record<string, Record<string, { parameters?: any[] }>>)) {
      if (!path.includes('{offering_id}')) continue;
      for (const [method, op] of Object.entries(ops)) {
        const param = op.parameters?.find((p) => p.name === 'offering_id' && p.in === 'path');
        expect(param?.description, `${method} ${path}`).toMatch(/course/);
        seen++;
      }
    }
    expect(seen).toBe(7);
  });
});
