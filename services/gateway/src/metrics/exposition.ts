/** One sample of the Prometheus text format: a series' name, labels and value. */
export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

const SAMPLE = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})?\s+(\S+)$/;
const LABEL = /([a-zA-Z_]\w*)="((?:[^"\\]|\\.)*)"/g;

/** The samples of a Prometheus text exposition (GET /metrics), comments left out. */
export function parseExposition(text: string): Sample[] {
  const samples: Sample[] = [];
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const match = SAMPLE.exec(line);
    if (!match) continue;
    const labels: Record<string, string> = {};
    for (const [, name, raw] of (match[2] ?? '').matchAll(LABEL)) {
      labels[name!] = raw!.replace(/\\(.)/g, (_, c: string) => (c === 'n' ? '\n' : c));
    }
    samples.push({ name: match[1]!, labels, value: Number(match[3]) });
  }
  return samples;
}

/** The sum of a metric's samples whose labels include all of `labels`. */
export function sampleSum(samples: readonly Sample[], name: string, labels: Record<string, string>): number {
  let sum = 0;
  for (const sample of samples) {
    if (sample.name !== name) continue;
    if (Object.entries(labels).every(([key, value]) => sample.labels[key] === value)) sum += sample.value;
  }
  return sum;
}

/** The metric families a registry exposes (its `# TYPE` lines), by name and type. */
export function metricFamilies(text: string): Map<string, string> {
  const families = new Map<string, string>();
  for (const line of text.split('\n')) {
    const match = /^# TYPE (\S+) (\S+)$/.exec(line);
    if (match) families.set(match[1]!, match[2]!);
  }
  return families;
}

/** What docs/metrics.md lists of a registered metric. */
interface Described {
  name: string;
  type: string;
  help: string;
  labelNames?: readonly string[] | undefined;
}

/**
 * The table of every `switchyard_*` metric a registry holds, by name: its type, labels and
 * help, as docs/metrics.md lists them between `<!-- metrics:begin -->` and `<!-- metrics:end -->`.
 */
export function metricsTable(metrics: readonly Described[]): string {
  const rows = metrics
    .filter((metric) => metric.name.startsWith('switchyard_'))
    .sort((a, b) => a.name.localeCompare(b.name))
    .map((metric) => {
      const labels = (metric.labelNames ?? []).map((label) => `\`${label}\``).join(', ') || '—';
      return `| \`${metric.name}\` | ${metric.type} | ${labels} | ${metric.help.replace(/\|/g, '\\|')} |`;
    });
  return ['| Metric | Type | Labels | Meaning |', '| --- | --- | --- | --- |', ...rows].join('\n');
}

/** PromQL's functions, aggregations and keywords: an expression's other identifiers are metric names. */
const PROMQL_WORDS = new Set([
  'sum',
  'max',
  'min',
  'avg',
  'count',
  'by',
  'without',
  'rate',
  'irate',
  'increase',
  'histogram_quantile',
  'clamp_min',
  'clamp_max',
  'and',
  'or',
  'unless',
  'on',
  'ignoring',
  'e',
]);

/**
 * The metric names a PromQL expression (or Grafana's label_values query) reads: what is left
 * once strings, label matchers, ranges, grouping clauses, numbers and PromQL's own words are
 * taken out.
 */
export function metricNamesIn(expression: string): string[] {
  const bare = expression
    // Grafana's label_values(metric, label): its second argument is a label.
    .replace(/\blabel_values\(([^,)]*),[^)]*\)/g, ' $1 ')
    .replace(/"(?:[^"\\]|\\.)*"/g, '""')
    .replace(/\{[^}]*\}/g, ' ')
    .replace(/\[[^\]]*\]/g, ' ')
    .replace(/\b(by|without|on|ignoring)\s*\([^)]*\)/g, ' ')
    .replace(/\b\d+(\.\d+)?(e-?\d+)?\b/g, ' ');
  const names = new Set<string>();
  for (const [word] of bare.matchAll(/[a-zA-Z_:][\w:]*/g)) {
    if (!PROMQL_WORDS.has(word)) names.add(word);
  }
  return [...names];
}
