// Rosters: OneRoster 1.2 CSV bundles imported by tenant admins as background jobs (job.ts), their
// users, classes (as courses) and enrollments linked by sourcedId (importer.ts); see docs/rosters.md.
import type { Area } from '../context';
import { uploadBody } from '../http/body';
import { rosterImportJob } from './job';
import { permissions } from './policy';
import { rostersRouter } from './routes';
import { MAX_BUNDLE_BYTES, ROSTER_IMPORT_KIND } from './service';

export const rostersArea: Area = {
  scope: { name: 'rosters', description: 'roster imports (OneRoster CSV)' },
  router: rostersRouter,
  permissions,
  jobs: (deps) => ({ [ROSTER_IMPORT_KIND]: rosterImportJob(deps) }),
  bodies: () => [uploadBody('POST', /^\/api\/rosters\/imports$/, MAX_BUNDLE_BYTES)],
};
