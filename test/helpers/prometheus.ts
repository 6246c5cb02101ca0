// A small parser of the Prometheus text exposition format (version 0.0.4), strict enough to
// catch what a scraper would refuse: every sample belongs to a family declared by # TYPE, label
// values are quoted and escaped, values are numbers.
export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

export interface Exposition {
  types: Map<string, string>;
  samples: Sample[];
  /** The samples of `name` whose labels include `labels`. */
  find(name: string, labels?: Record<string, string>): Sample[];
  /** The sum of those samples' values (0 when there are none). */
  sum(name: string, labels?: Record<string, string>): number;
}

const SAMPLE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)(?:\s+-?\d+)?$/;
const LABEL = /\s*([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"\s*(?:,|$)/y;

function parseLabels(text: string, line: string): Record<string, string> {
  const labels: Record<string, string> = {};
  LABEL.lastIndex = 0;
  while (LABEL.lastIndex < text.length) {
    const start = LABEL.lastIndex;
    const match = LABEL.exec(text);
    if (!match || LABEL.lastIndex === start) throw new Error(`bad labels in: ${line}`);
    labels[match[1]!] = match[2]!.replace(/\\n/g, '\n').replace(/\\"/g, '"').replace(/\\\\/g, '\\');
  }
  return labels;
}

const familyOf = (name: string, types: Map<string, string>) => {
  if (types.has(name)) return name;
  const base = name.replace(/_(bucket|sum|count|total|created)$/, '');
  return types.has(base) ? base : undefined;
};

export function parseExposition(text: string): Exposition {
  const types = new Map<string, string>();
  const samples: Sample[] = [];
  for (const line of text.split('\n')) {
    if (line.trim() === '') continue;
    if (line.startsWith('#')) {
      const type = /^# TYPE (\S+) (counter|gauge|histogram|summary|untyped)$/.exec(line);
      if (type) types.set(type[1]!, type[2]!);
      else if (!/^# HELP \S+ /.test(line)) throw new Error(`bad comment line: ${line}`);
      continue;
    }
    const match = SAMPLE.exec(line);
    if (!match) throw new Error(`bad sample line: ${line}`);
    const [, name, labelText, raw] = match;
    // Go's ParseFloat, which Prometheus uses, takes NaN and Inf in any case (prom-client writes `Nan`).
    const special = raw!.toLowerCase();
    const value = special === '+inf' || special === 'inf' ? Infinity : special === '-inf' ? -Infinity : special === 'nan' ? NaN : Number(raw);
    if (special !== 'nan' && Number.isNaN(value)) throw new Error(`bad value in: ${line}`);
    if (!familyOf(name!, types)) throw new Error(`sample of an undeclared family: ${line}`);
    samples.push({ name: name!, labels: labelText ? parseLabels(labelText, line) : {}, value });
  }
  const find = (name: string, labels: Record<string, string> = {}) =>
    samples.filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v));
  return { types, samples, find, sum: (name, labels) => find(name, labels).reduce((total, s) => total + s.value, 0) };
}
