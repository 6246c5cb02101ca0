// Regenerates test/generated/api.d.ts, the TypeScript types of the served OpenAPI document
// (openapi-typescript). test/openapi-client.test.ts fails while the committed file differs from
// what the document gives, so that a schema change comes with its client types.
// Run: npm run gen:api-types
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { API_TYPES_FILE, apiTypesSource, servedOpenApiDocument } from '../test/helpers/openapi';

writeFileSync(API_TYPES_FILE, await apiTypesSource(await servedOpenApiDocument()));
console.log(`wrote ${path.relative(process.cwd(), API_TYPES_FILE)}`);
