// The gradebook's pure arithmetic and policy, checked on hand-worked cases.
import { describe, expect, it } from 'vitest';
import { canManageGradebook, canReadStudentGrades } from '../src/gradebook/policy';
import { DEFAULT_LETTER_SCALE, describeScores, letterFor, roundPercent, WeightedPercent } from '../src/gradebook/statistics';

describe('describeScores', () => {
  it('gives nulls for no scores', () => {
    expect(describeScores(Float64Array.of())).toEqual({ count: 0, mean: null, median: null, min: null, max: null, stddev: null });
  });

  it('takes the middle value of an odd count and the mean of the two middle values of an even one', () => {
    expect(describeScores(Float64Array.of(7, 1, 3))).toMatchObject({ count: 3, median: 3, min: 1, max: 7 });
    expect(describeScores(Float64Array.of(4, 1, 3, 10))).toMatchObject({ count: 4, median: 3.5, min: 1, max: 10, mean: 4.5 });
  });

  it('agrees with a sort on many small sets full of ties (the median comes from selection, not sorting)', () => {
    let x = 7;
    const next = () => (x = (x * 1103515245 + 12345) % 2147483648) / 2147483648;
    for (let trial = 0; trial < 2000; trial++) {
      const n = 1 + Math.floor(next() * 30);
      const distinct = 1 + Math.floor(next() * 6);
      const values = Array.from({ length: n }, () => Math.floor(next() * distinct) / 2);
      const sorted = [...values].sort((a, b) => a - b);
      const median = n % 2 ? sorted[n >> 1]! : (sorted[n / 2 - 1]! + sorted[n / 2]!) / 2;
      expect(describeScores(Float64Array.from(values)), values.join(',')).toMatchObject({ median, min: sorted[0], max: sorted[n - 1] });
    }
  });

  it('uses the population standard deviation', () => {
    // 2, 4, 4, 4, 5, 5, 7, 9: mean 5, population σ exactly 2 (sample s would be ≈ 2.138).
    expect(describeScores(Float64Array.of(2, 4, 4, 4, 5, 5, 7, 9)).stddev).toBe(2);
    expect(describeScores(Float64Array.of(5)).stddev).toBe(0);
  });
});

describe('WeightedPercent', () => {
  it('weights by assignment weight when no category weights are set', () => {
    const w = new WeightedPercent();
    w.add({ category: 'a', weight: 1, fraction: 1 });
    w.add({ category: 'b', weight: 3, fraction: 0.5 });
    expect(w.percent({})).toBe(62.5);
  });

  it('averages within categories, then across them by category weight; unlisted categories weigh 0', () => {
    const w = new WeightedPercent();
    w.add({ category: 'hw', weight: 1, fraction: 1 });
    w.add({ category: 'hw', weight: 1, fraction: 0 });
    w.add({ category: 'exam', weight: 2, fraction: 0.9 });
    w.add({ category: 'extra', weight: 5, fraction: 0 });
    // (20 × 0.5 + 80 × 0.9) / 100 = 82 %
    expect(w.percent({ hw: 20, exam: 80 })).toBe(82);
  });

  it('leaves out categories without grades and work of weight 0, and is null when nothing counts', () => {
    const w = new WeightedPercent();
    expect(w.percent({})).toBeNull();
    w.add({ category: 'hw', weight: 0, fraction: 1 });
    expect(w.percent({})).toBeNull();
    w.add({ category: 'exam', weight: 1, fraction: 2 / 3 });
    expect(w.percent({ hw: 50, exam: 50 })).toBe(66.67);
    expect(w.percent({ hw: 1 })).toBeNull();
  });
});

describe('roundPercent', () => {
  it('rounds half up to two decimals, the exact value and not its floating-point error', () => {
    expect(roundPercent((100 * 8.9995) / 10)).toBe(90);
    expect(roundPercent((100 * 899.95) / 1000)).toBe(90);
    expect(roundPercent(89.99499)).toBe(89.99);
    expect(roundPercent((100 * 2) / 3)).toBe(66.67);
    expect(roundPercent((100 * 1) / 3)).toBe(33.33);
    expect(roundPercent(0.005)).toBe(0.01);
    expect(roundPercent(100)).toBe(100);
    expect(roundPercent(0)).toBe(0);
  });
});

describe('letterFor', () => {
  it('reads the highest threshold reached on the default scale', () => {
    expect(letterFor(100, DEFAULT_LETTER_SCALE)).toBe('A');
    expect(letterFor(90, DEFAULT_LETTER_SCALE)).toBe('A');
    expect(letterFor(89.99, DEFAULT_LETTER_SCALE)).toBe('B');
    expect(letterFor(60, DEFAULT_LETTER_SCALE)).toBe('D');
    expect(letterFor(0, DEFAULT_LETTER_SCALE)).toBe('F');
    expect(letterFor(null, DEFAULT_LETTER_SCALE)).toBeNull();
  });
});

describe('gradebook policy', () => {
  const member = { role: 'member' as const, userId: 'u1' };
  it('lets active instructors and admins manage, never TAs, students or former instructors', () => {
    expect(canManageGradebook(member, { role: 'instructor', status: 'active' })).toBe(true);
    expect(canManageGradebook({ role: 'admin' }, undefined)).toBe(true);
    expect(canManageGradebook(member, { role: 'ta', status: 'active' })).toBe(false);
    expect(canManageGradebook(member, { role: 'student', status: 'active' })).toBe(false);
    expect(canManageGradebook(member, { role: 'instructor', status: 'dropped' })).toBe(false);
    expect(canManageGradebook(member, undefined)).toBe(false);
  });
  it("lets a student read only their own grades, and the course's staff everyone's", () => {
    expect(canReadStudentGrades(member, 'u1', { role: 'student', status: 'active' })).toBe(true);
    expect(canReadStudentGrades(member, 'u2', { role: 'student', status: 'active' })).toBe(false);
    // A TA reads the gradebook of their course (API.md, "Course roles").
    expect(canReadStudentGrades(member, 'u2', { role: 'ta', status: 'active' })).toBe(true);
    expect(canReadStudentGrades(member, 'u2', { role: 'instructor', status: 'active' })).toBe(true);
  });
});
