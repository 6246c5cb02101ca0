// Every functional area of the server, in the order the app mounts them. A new area is one folder
// with an index.ts, and one line here.
import { collabArea } from '../collab';
import { exportArea } from '../export';
import { complianceArea } from './compliance';
import type { PermissionRules } from './auth/access';
import type { Area } from './context';
import { activitiesArea } from './activities';
import { analyticsArea } from './analytics';
import { apiKeysArea } from './api-keys';
import { commentsArea } from './comments';
import { templatesArea } from './templates';
import { authArea } from './auth';
import { backupArea } from './backup';
import { competenciesArea } from './competencies';
import { coursesArea } from './courses';
import { dashboardArea } from './dashboard';
import { documentsArea } from './documents';
import { enrollmentsArea } from './enrollments';
import { gradebookArea } from './gradebook';
import { groupsArea } from './groups';
import { metricsArea } from './metrics';
import { sequencingArea } from './sequencing';
import { systemArea } from './system';
import { tenantsArea } from './tenants';
import { usersArea } from './users';
import { webhooksArea } from './webhooks';
import { ssoArea } from './sso';
import { filesArea } from './files';
import { rostersArea } from './rosters';
import { mailArea } from './mail';
import { importsArea } from './imports';
import { ltiArea } from './lti';

export const areas: readonly Area[] = [
  systemArea,
  authArea,
  usersArea,
  tenantsArea,
  groupsArea,
  apiKeysArea,
  collabArea,
  gradebookArea,
  coursesArea,
  competenciesArea,
  activitiesArea,
  enrollmentsArea,
  sequencingArea,
  complianceArea,
  analyticsArea,
  documentsArea,
  dashboardArea,
  metricsArea,
  backupArea,
  webhooksArea,
  commentsArea,
  exportArea,
  templatesArea,
  ssoArea,
  filesArea,
  rostersArea,
  mailArea,
  importsArea,
  ltiArea,
];

/** The tenant-wide rights every area defines, as GET /api/users/me/permissions reports them. */
export const tenantPermissions: PermissionRules = Object.assign({}, ...areas.map((area) => area.permissions ?? {}));
