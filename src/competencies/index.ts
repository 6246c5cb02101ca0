// Competencies: frameworks (authored, or imported from IMS CASE 1.0), competencies as a tree,
// alignments to course content, and mastery computed from live grades and completions.
import type { Area } from '../context';
import { permissions } from './policy';
import { competenciesRouter } from './routes';

// Its module cleanup (cleanup.ts) is registered in src/deps.ts, before the activities'.
export const competenciesArea: Area = { router: competenciesRouter, permissions, scope: { name: 'competencies', description: 'competency frameworks, alignments and progress' } };
