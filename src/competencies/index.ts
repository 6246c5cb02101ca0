// Competencies: frameworks (authored, or imported from IMS CASE 1.0), competencies as a tree,
// alignments to course content, and mastery computed from live grades and completions.
import type { Area } from '../context';
import { deleteModuleAlignments } from './cleanup';
import { permissions } from './policy';
import { competenciesRouter } from './routes';

export const competenciesArea: Area = { router: competenciesRouter, permissions, moduleCleanups: [deleteModuleAlignments] };
