// The OpenAPI document as the app serves it, and the TypeScript types openapi-typescript makes of
// it. One code path for the scripts (lint, type generation) and for test/openapi-client.test.ts,
// so that what is linted, what is committed and what is compared are the same document.
import path from 'node:path';
import openapiTS, { astToString, COMMENT_HEADER, type OpenAPI3 } from 'openapi-typescript';
import { makeTestApp, type TestApp } from './app';

export type OpenApiDocument = OpenAPI3;

/** The committed client types, checked by test/openapi-client.test.ts; `npm run gen:api-types` rewrites them. */
export const API_TYPES_FILE = path.resolve(import.meta.dirname, '../generated/api.d.ts');

/** GET /api/openapi.json of this app. */
export async function fetchOpenApiDocument(app: TestApp['app']): Promise<OpenApiDocument> {
  const res = await app.request('/api/openapi.json');
  if (res.status !== 200) throw new Error(`/api/openapi.json answered ${res.status}: ${await res.text()}`);
  return (await res.json()) as OpenApiDocument;
}

/** The document of an app built as the tests build it (in memory, on a throwaway database). */
export async function servedOpenApiDocument(): Promise<OpenApiDocument> {
  const testApp = await makeTestApp();
  try {
    return await fetchOpenApiDocument(testApp.app);
  } finally {
    testApp.close();
  }
}

/** The source of test/generated/api.d.ts for this document (openapi-typescript's Node API). */
export async function apiTypesSource(document: OpenApiDocument): Promise<string> {
  // openapi-typescript reads what it is given; a copy keeps the caller's document untouched.
  // defaultNonNullable off: a property with a default may be left out of a request body (the
  // server fills it in); on, the types would demand it.
  const ast = await openapiTS(structuredClone(document), { silent: true, defaultNonNullable: false });
  return `${COMMENT_HEADER.replace(' */', ' * Regenerate with `npm run gen:api-types` (from the served /api/openapi.json).\n */')}${astToString(ast)}`;
}
