// Alignments point at course content without a foreign key (the target is an activity, a module
// or an assignment): whoever deletes such content removes the alignments to it in the same
// transaction. This file imports nothing but the schema, so any area can call it.
import { inArray } from 'drizzle-orm';
import type { Db } from '../../db/client';
import { competencyAlignments } from '../../db/schema';

export function deleteAlignmentsTo(tx: Db, targetIds: string[]): void {
  for (let i = 0; i < targetIds.length; i += 500) {
    tx.delete(competencyAlignments).where(inArray(competencyAlignments.targetId, targetIds.slice(i, i + 500))).run();
  }
}

/** A module's cleanup (Deps.moduleCleanups): the alignments to the module (its activities' go with them). */
export function deleteModuleAlignments(tx: Db, module: { id: string }): void {
  deleteAlignmentsTo(tx, [module.id]);
}
