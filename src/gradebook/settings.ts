// Per-offering gradebook settings: category weights and the letter scale (defaults: no
// weighting, the A–F scale).
import { and, eq } from 'drizzle-orm';
import type { Db } from '../../db/client';
import { gradebookSettings } from '../../db/schema';
import { unprocessable, type FieldError } from '../http/errors';
import type { Clock } from '../lib/clock';
import type { Offering } from './service';
import { DEFAULT_LETTER_SCALE, type LetterThreshold } from './statistics';

export interface GradebookSettings {
  categoryWeights: Record<string, number>;
  letterScale: LetterThreshold[];
  updatedAt: string | null;
}

export function getSettings(db: Db, offering: Offering): GradebookSettings {
  const row = db
    .select()
    .from(gradebookSettings)
    .where(and(eq(gradebookSettings.courseId, offering.id), eq(gradebookSettings.tenantId, offering.tenantId)))
    .get();
  if (!row) return { categoryWeights: {}, letterScale: DEFAULT_LETTER_SCALE.map((s) => ({ ...s })), updatedAt: null };
  return { categoryWeights: row.categoryWeights, letterScale: row.letterScale, updatedAt: row.updatedAt };
}

/** Rules a well-formed settings body must still meet; each broken one is a field error (422). */
export function settingsProblems(input: { categoryWeights: Record<string, number>; letterScale: LetterThreshold[] }): FieldError[] {
  const problems: FieldError[] = [];
  const weights = Object.entries(input.categoryWeights);
  if (weights.length > 100) problems.push({ path: 'category_weights', message: 'at most 100 categories' });
  for (const [name, w] of weights) {
    if (!Number.isFinite(w) || w < 0) problems.push({ path: `category_weights.${name}`, message: 'must be a number ≥ 0' });
  }
  if (weights.length > 0 && weights.every(([, w]) => w === 0)) {
    problems.push({ path: 'category_weights', message: 'at least one category must weigh more than 0' });
  }
  const scale = input.letterScale;
  const seen = new Set<string>();
  scale.forEach((step, i) => {
    if (!(step.min_percent >= 0 && step.min_percent <= 100)) {
      problems.push({ path: `letter_scale.${i}.min_percent`, message: 'must be within 0..100' });
    }
    if (i > 0 && !(step.min_percent < scale[i - 1]!.min_percent)) {
      problems.push({ path: `letter_scale.${i}.min_percent`, message: 'the scale must be sorted by min_percent, highest first, without ties' });
    }
    if (seen.has(step.letter)) problems.push({ path: `letter_scale.${i}.letter`, message: `letter ${step.letter} appears twice` });
    seen.add(step.letter);
  });
  if (scale.length > 0 && scale[scale.length - 1]!.min_percent !== 0) {
    problems.push({ path: `letter_scale.${scale.length - 1}.min_percent`, message: 'the last step must start at 0 so that every percent gets a letter' });
  }
  return problems;
}

/** Replaces the offering's settings; an omitted part takes its default (no weighting, A–F scale). */
export function putSettings(
  db: Db,
  clock: Clock,
  offering: Offering,
  updatedBy: string,
  input: { categoryWeights?: Record<string, number>; letterScale?: LetterThreshold[] },
): GradebookSettings {
  const categoryWeights = input.categoryWeights ?? {};
  const letterScale = input.letterScale ?? DEFAULT_LETTER_SCALE.map((s) => ({ ...s }));
  const problems = settingsProblems({ categoryWeights, letterScale });
  if (problems.length > 0) throw unprocessable('The gradebook settings are not acceptable', problems);
  const updatedAt = clock.now().toISOString();
  db.insert(gradebookSettings)
    .values({ courseId: offering.id, tenantId: offering.tenantId, categoryWeights, letterScale, updatedBy, updatedAt })
    .onConflictDoUpdate({ target: gradebookSettings.courseId, set: { categoryWeights, letterScale, updatedBy, updatedAt } })
    .run();
  return { categoryWeights, letterScale, updatedAt };
}
