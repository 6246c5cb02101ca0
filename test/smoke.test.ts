import { afterAll, describe, expect, it } from 'vitest';
import { makeTestApp, type TestApp } from './helpers/app';

describe('smoke', () => {
  let t: TestApp;
  afterAll(() => t?.close());
  it('boots and answers /api/users/me for the admin', async () => {
    t = await makeTestApp();
    const res = await t.call('GET', '/api/users/me', { as: t.admin });
    expect(res.status).toBe(200);
    expect(res.body.email).toBe('admin@example.com');
  });
});
