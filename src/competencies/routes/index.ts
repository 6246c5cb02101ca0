// Competencies over HTTP, one file per section: the caller's progress (progress.ts), search,
// frameworks with CASE import and export, competencies as a tree, alignments to course content,
// and a course's mastery (courses.ts). Mounted in this order: a literal path (search, frameworks)
// must come before the `{id}` it would also match.
import { newRouter } from '../../http/openapi';
import { alignmentRoutes } from './alignments';
import { competencyRoutes } from './competencies';
import { courseMasteryRoutes } from './courses';
import { frameworkRoutes } from './frameworks';
import { progressRoutes } from './progress';
import { searchRoutes } from './search';

export const competenciesRouter = newRouter()
  .route('/', progressRoutes)
  .route('/', searchRoutes)
  .route('/', frameworkRoutes)
  .route('/', competencyRoutes)
  .route('/', alignmentRoutes)
  .route('/', courseMasteryRoutes);
