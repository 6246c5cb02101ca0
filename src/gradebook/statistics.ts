// The gradebook's arithmetic, pure and synchronous: descriptive statistics of an assignment's
// scores, a student's weighted percent, and the letter a percent earns.
//
// Weighted percent (the rule, also in the API reference):
//   1. Each grade is normalised: score / score_maximum.
//   2. Within a category, grades are averaged weighted by their assignment's weight.
//   3. Categories are averaged weighted by the offering's category weights. With no category
//      weights configured, categories are not weighted: every grade counts by its assignment's
//      weight across the whole offering. With weights configured, a category absent from them
//      weighs 0.
//   4. Missing grades are left out of both numerator and denominator (the percent is over what
//      has been graded so far); a category without grades drops out of step 3 likewise.
//   5. No grade that counts (nothing graded, or only weight-0 work): the percent is null.
//   The percent is rounded to 2 decimals, and the letter is read from that rounded value, so
//   what a student sees and the letter they get always agree.

export interface LetterThreshold {
  letter: string;
  min_percent: number;
}

export const DEFAULT_LETTER_SCALE: readonly LetterThreshold[] = Object.freeze([
  { letter: 'A', min_percent: 90 },
  { letter: 'B', min_percent: 80 },
  { letter: 'C', min_percent: 70 },
  { letter: 'D', min_percent: 60 },
  { letter: 'F', min_percent: 0 },
]);

export interface ScoreStatistics {
  count: number;
  mean: number | null;
  median: number | null;
  min: number | null;
  max: number | null;
  /** Population standard deviation (divides by n, not n − 1). */
  stddev: number | null;
}

/** Statistics of a set of scores, in linear time; reorders `scores`. */
export function describeScores(scores: Float64Array): ScoreStatistics {
  const n = scores.length;
  if (n === 0) return { count: 0, mean: null, median: null, min: null, max: null, stddev: null };
  let sum = 0;
  let min = scores[0]!;
  let max = min;
  for (let i = 0; i < n; i++) {
    const s = scores[i]!;
    sum += s;
    if (s < min) min = s;
    if (s > max) max = s;
  }
  const mean = sum / n;
  // Two passes rather than E[x²] − E[x]²: the one-pass formula loses precision when scores are close.
  let squares = 0;
  for (let i = 0; i < n; i++) squares += (scores[i]! - mean) ** 2;
  // Selection rather than a sort: the summary takes a median of every assignment's column.
  const middle = n >> 1;
  const upper = selectInPlace(scores, middle);
  let median = upper;
  if (n % 2 === 0) {
    // Selection leaves everything before `middle` no greater than it: the lower middle is their maximum.
    let lower = scores[0]!;
    for (let i = 1; i < middle; i++) if (scores[i]! > lower) lower = scores[i]!;
    median = (lower + upper) / 2;
  }
  return { count: n, mean, median, min, max, stddev: Math.sqrt(squares / n) };
}

/**
 * The k-th smallest value (from 0), by Hoare's selection: afterwards values before index k are no
 * greater than it, and values after it no smaller.
 */
function selectInPlace(a: Float64Array, k: number): number {
  let lo = 0;
  let hi = a.length - 1;
  while (lo < hi) {
    const pivot = a[(lo + hi) >> 1]!;
    let i = lo;
    let j = hi;
    while (i <= j) {
      while (a[i]! < pivot) i++;
      while (a[j]! > pivot) j--;
      if (i <= j) {
        const t = a[i]!;
        a[i] = a[j]!;
        a[j] = t;
        i++;
        j--;
      }
    }
    if (k <= j) hi = j;
    else if (k >= i) lo = i;
    else break;
  }
  return a[k]!;
}

export interface WeightedGrade {
  category: string;
  /** The assignment's weight within its category. */
  weight: number;
  /** score / score_maximum, in 0..1. */
  fraction: number;
}

/** Accumulates one student's grades category by category; see the rule at the top of this file. */
export class WeightedPercent {
  private readonly categories = new Map<string, { weighted: number; weights: number }>();

  add(grade: WeightedGrade): void {
    if (grade.weight <= 0) return;
    let acc = this.categories.get(grade.category);
    if (!acc) {
      acc = { weighted: 0, weights: 0 };
      this.categories.set(grade.category, acc);
    }
    acc.weighted += grade.weight * grade.fraction;
    acc.weights += grade.weight;
  }

  /** Percent in 0..100 rounded to 2 decimals, or null when no grade counts. */
  percent(categoryWeights: Record<string, number>): number | null {
    const weighted = Object.keys(categoryWeights).length > 0;
    let numerator = 0;
    let denominator = 0;
    for (const [category, acc] of this.categories) {
      if (weighted) {
        // Own keys only: a category named `constructor` or `toString` is a category, not Object's.
        const w = Object.hasOwn(categoryWeights, category) ? categoryWeights[category]! : 0;
        if (w <= 0) continue;
        numerator += (w * acc.weighted) / acc.weights;
        denominator += w;
      } else {
        numerator += acc.weighted;
        denominator += acc.weights;
      }
    }
    if (denominator <= 0) return null;
    return roundPercent((100 * numerator) / denominator);
  }
}

/**
 * A percent rounded half up to 2 decimals, as a person would round the exact value. The arithmetic
 * before it is binary floating point, which leaves 89.995 as 89.99499999999999; reading the
 * hundredths to 12 significant digits first removes that noise (no real percent has more).
 */
export const roundPercent = (value: number): number => Math.round(Number((value * 100).toPrecision(12))) / 100;

/** The letter of the highest threshold the percent reaches; the scale is sorted highest first. */
export function letterFor(percent: number | null, scale: readonly LetterThreshold[]): string | null {
  if (percent === null) return null;
  for (const step of scale) if (percent >= step.min_percent) return step.letter;
  return null;
}
