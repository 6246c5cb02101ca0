// Writes the OpenAPI document the server serves at /api/openapi.json to a file (or stdout), built
// the way the tests build the app: in memory, on a throwaway database. `npm run lint:openapi`
// lints what this writes, so the lint reads exactly what client generators read.
// Run: npx tsx scripts/write-openapi.ts [out.json]
import { writeFileSync } from 'node:fs';
import { makeTestApp } from '../test/helpers/app';

const out = process.argv[2];
const testApp = await makeTestApp();
try {
  const res = await testApp.app.request('/api/openapi.json');
  if (res.status !== 200) throw new Error(`/api/openapi.json answered ${res.status}: ${await res.text()}`);
  const body = `${JSON.stringify(await res.json(), null, 2)}\n`;
  if (out) writeFileSync(out, body);
  else process.stdout.write(body);
} finally {
  testApp.close();
}
