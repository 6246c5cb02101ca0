// Writes the OpenAPI document the server serves at /api/openapi.json to a file (or stdout), built
// the way the tests build the app: in memory, on a throwaway database.
// Run: npx tsx scripts/write-openapi.ts [out.json]
import { writeFileSync } from 'node:fs';
import { servedOpenApiDocument } from '../test/helpers/openapi';

const out = process.argv[2];
const body = `${JSON.stringify(await servedOpenApiDocument(), null, 2)}\n`;
if (out) writeFileSync(out, body);
else process.stdout.write(body);
