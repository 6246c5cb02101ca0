// Course migration: IMS Common Cartridge in (POST /api/imports, a background job: job.ts, the heavy
// parts in worker threads: tasks.ts, the package read without trusting it: zip.ts, manifest.ts,
// html.ts; the write in one transaction: service.ts) and out (GET /api/courses/{id}/export: export.ts).
import { uploadBody } from '../http/body';
import type { Area } from '../context';
import { importJobs } from './job';
import { importsRouter } from './routes';

export const importsArea: Area = {
  scope: { name: 'imports', description: 'course imports and cartridge exports (IMS Common Cartridge)' },
  router: importsRouter,
  jobs: importJobs,
  bodies: (config) => [uploadBody('POST', /^\/api\/imports$/, config.importMaxBytes)],
};
