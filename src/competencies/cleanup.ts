// Alignments point at course content without a foreign key (the target is an activity, a module
// or an assignment): whoever deletes such content removes the alignments to it in the same
// transaction. This file imports nothing but the schema, so any area can call it.
import { eq, inArray } from 'drizzle-orm';
import type { Db } from '../../db/client';
import { activities, competencyAlignments } from '../../db/schema';

export function deleteAlignmentsTo(tx: Db, targetIds: string[]): void {
  for (let i = 0; i < targetIds.length; i += 500) {
    tx.delete(competencyAlignments).where(inArray(competencyAlignments.targetId, targetIds.slice(i, i + 500))).run();
  }
}

/** A module's cleanup (Deps.moduleCleanups): the alignments to the module and to its activities. */
export function deleteModuleAlignments(tx: Db, module: { id: string }): void {
  const activityIds = tx.select({ id: activities.id }).from(activities).where(eq(activities.moduleId, module.id)).all().map((a) => a.id);
  deleteAlignmentsTo(tx, [module.id, ...activityIds]);
}
