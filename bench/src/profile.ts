import { existsSync, readFileSync } from 'node:fs';
import { SourceMap } from 'node:module';
import { fileURLToPath } from 'node:url';

interface CpuProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number; columnNumber?: number };
  children?: number[];
}

export interface CpuProfile {
  nodes: CpuProfileNode[];
  samples: number[];
  timeDeltas: number[];
  startTime: number;
  endTime: number;
}

export interface ProfileRow {
  name: string;
  where: string;
  ms: number;
  share: number;
}

/** A span of the run on the shared monotonic clock (`process.hrtime`), in µs. */
export interface ProfileWindow {
  name: string;
  startUs: number;
  endUs: number;
}

export interface WindowLoad {
  name: string;
  seconds: number;
  /** Share of the window the profiled thread was busy (not idle), %. */
  busyShare: number;
}

export interface ProfileSummary {
  totalMs: number;
  busyMs: number;
  windows: WindowLoad[];
  categories: ProfileRow[];
  ownSelf: ProfileRow[];
  ownInclusive: ProfileRow[];
  packages: ProfileRow[];
  /** Busy time charged to the innermost own-code file on the stack (its own work and the libraries it called). */
  nearestOwnFile: ProfileRow[];
  overallSelf: ProfileRow[];
}

type Kind = 'own' | 'dependency' | 'node' | 'wasm' | 'vm';

const CATEGORY: Record<Kind, string> = {
  own: 'own code (services/, packages/)',
  dependency: 'dependencies (node_modules)',
  node: 'Node.js (JavaScript built-ins and native bindings)',
  wasm: "WebAssembly (undici's HTTP parser, llhttp; in all-in-one mode also the embedded PGlite)",
  vm: 'V8',
};

/** Entries V8 reports without a script that are the engine itself rather than a native binding. */
const VM_ENTRIES = new Set(['(garbage collector)', '(program)', '(root)', '(idle)']);

/**
 * Self and inclusive time per function from a V8 `.cpuprofile` (`node --cpu-prof`), with
 * "own" meaning files under services/ and packages/ of this repository. Shares are of busy
 * time (everything but idle). With windows, only samples inside them count: a profile's
 * timestamps and `process.hrtime` in any process of the machine share one monotonic clock.
 */
export function readProfile(file: string): CpuProfile {
  return JSON.parse(readFileSync(file, 'utf8')) as CpuProfile;
}

export function summarizeProfile(
  profile: CpuProfile,
  repoRoot: string,
  options: { top?: number; windows?: ProfileWindow[] } = {},
): ProfileSummary {
  const top = options.top ?? 20;
  const windows = options.windows ?? [];
  const windowBusyUs = windows.map(() => 0);
  const byId = new Map<number, CpuProfileNode>();
  const parent = new Map<number, number>();
  for (const node of profile.nodes) {
    byId.set(node.id, node);
    for (const child of node.children ?? []) parent.set(child, node.id);
  }
  const root = repoRoot.endsWith('/') ? repoRoot : `${repoRoot}/`;
  const describe = new Map<number, { key: string; name: string; where: string; kind: Kind; pkg: string }>();
  for (const node of profile.nodes) describe.set(node.id, classify(node, root));

  const self = new Map<string, number>();
  const inclusive = new Map<string, number>();
  const kinds = new Map<string, number>();
  const packages = new Map<string, number>();
  const byOwnFile = new Map<string, number>();
  let totalUs = 0;
  let idleUs = 0;
  const n = profile.samples.length;
  let at = profile.startTime;
  for (let i = 0; i < n; i++) {
    at += profile.timeDeltas[i] ?? 0;
    const delta = profile.timeDeltas[i + 1] ?? profile.timeDeltas[i] ?? 0;
    let inWindow = windows.length === 0;
    for (let w = 0; w < windows.length; w++) {
      if (at >= windows[w]!.startUs && at < windows[w]!.endUs) {
        inWindow = true;
        if (describe.get(profile.samples[i]!)!.name !== '(idle)') windowBusyUs[w]! += delta;
      }
    }
    if (!inWindow) continue;
    const id = profile.samples[i]!;
    const d = describe.get(id)!;
    totalUs += delta;
    if (d.name === '(idle)') {
      idleUs += delta;
      continue;
    }
    self.set(d.key, (self.get(d.key) ?? 0) + delta);
    const category = d.kind === 'vm' ? d.name : CATEGORY[d.kind];
    kinds.set(category, (kinds.get(category) ?? 0) + delta);
    if (d.kind !== 'own' && d.kind !== 'vm') packages.set(d.pkg, (packages.get(d.pkg) ?? 0) + delta);
    const seen = new Set<string>();
    let nearest: string | undefined;
    let outermostPackage: string | undefined;
    for (let frameId: number | undefined = id; frameId !== undefined; frameId = parent.get(frameId)) {
      const frame = describe.get(frameId)!;
      if (frame.kind === 'dependency' && nearest === undefined) outermostPackage = frame.pkg;
      if (frame.kind !== 'own' || seen.has(frame.key)) continue;
      nearest ??= frame.where;
      seen.add(frame.key);
      inclusive.set(frame.key, (inclusive.get(frame.key) ?? 0) + delta);
    }
    if (d.kind !== 'vm') {
      // Without own code on the stack the work is a callback of a library (e.g. a socket or a
      // database queue): charge it to the outermost library frame.
      const owner =
        nearest ??
        `(no own code on the stack) ${outermostPackage ?? (d.kind === 'wasm' ? 'WebAssembly' : 'Node.js')}`;
      byOwnFile.set(owner, (byOwnFile.get(owner) ?? 0) + delta);
    }
  }
  const busyUs = Math.max(1, totalUs - idleUs);
  const info = new Map<string, { name: string; where: string; kind: Kind }>();
  for (const d of describe.values()) info.set(d.key, d);
  const rows = (
    map: Map<string, number>,
    filter: (key: string) => boolean,
    label?: (key: string) => ProfileRow,
  ) =>
    [...map.entries()]
      .filter(([key]) => filter(key))
      .sort((a, b) => b[1] - a[1])
      .slice(0, top)
      .map(([key, us]) => {
        const base = label
          ? label(key)
          : { name: info.get(key)!.name, where: info.get(key)!.where, ms: 0, share: 0 };
        return { ...base, ms: Math.round(us / 100) / 10, share: Math.round((us / busyUs) * 1000) / 10 };
      });
  const isOwn = (key: string) => info.get(key)?.kind === 'own';
  return {
    totalMs: Math.round(totalUs / 1000),
    busyMs: Math.round(busyUs / 1000),
    windows: windows.map((w, i) => ({
      name: w.name,
      seconds: Math.round((w.endUs - w.startUs) / 10_000) / 100,
      busyShare: Math.round((windowBusyUs[i]! / Math.max(1, w.endUs - w.startUs)) * 1000) / 10,
    })),
    categories: rows(
      kinds,
      () => true,
      (key) => ({ name: key, where: '', ms: 0, share: 0 }),
    ),
    ownSelf: rows(self, isOwn),
    ownInclusive: rows(inclusive, isOwn),
    packages: rows(
      packages,
      () => true,
      (key) => ({ name: key, where: '', ms: 0, share: 0 }),
    ),
    nearestOwnFile: rows(
      byOwnFile,
      () => true,
      (key) => ({ name: key, where: '', ms: 0, share: 0 }),
    ),
    overallSelf: rows(self, () => true),
  };
}

function classify(
  node: CpuProfileNode,
  root: string,
): { key: string; name: string; where: string; kind: Kind; pkg: string } {
  const { functionName, url } = node.callFrame;
  let lineNumber = node.callFrame.lineNumber;
  const name = functionName || '(anonymous)';
  if (!url && VM_ENTRIES.has(name)) return { key: name, name, where: '', kind: 'vm', pkg: name };
  if (!url) return { key: name, name, where: 'native', kind: 'node', pkg: 'node (built-in)' };
  let path = url;
  if (url.startsWith('file://')) {
    try {
      path = fileURLToPath(url);
    } catch {
      path = url;
    }
  }
  let relative = path.startsWith(root) ? path.slice(root.length) : path;
  // The production bundle (dist/switchyard.mjs) is mapped back to its sources.
  const original = relative.includes('node_modules/') ? undefined : fromSourceMap(path, node.callFrame);
  if (original) {
    relative = original.source;
    lineNumber = original.line;
  }
  // Code loaded through tsx is on one line; the column then tells functions apart.
  const line = lineNumber > 0 ? `:${lineNumber + 1}` : '';
  const where = `${relative}${line}`;
  const key = `${name} ${where}:${lineNumber}:${node.callFrame.columnNumber ?? 0}`;
  const modules = relative.lastIndexOf('node_modules/');
  if (modules >= 0) {
    const rest = relative.slice(modules + 'node_modules/'.length).split('/');
    const pkg = rest[0]?.startsWith('@') ? `${rest[0]}/${rest[1]}` : (rest[0] ?? '?');
    return {
      key,
      name,
      where: `${pkg}/${rest.slice(pkg.includes('/') ? 2 : 1).join('/')}:${lineNumber + 1}`,
      kind: 'dependency',
      pkg,
    };
  }
  if (url.startsWith('wasm://')) return { key, name, where: 'wasm', kind: 'wasm', pkg: 'WebAssembly' };
  if (url.startsWith('node:') || !path.startsWith('/'))
    return { key, name, where, kind: 'node', pkg: 'node (built-in)' };
  if (relative.startsWith('services/') || relative.startsWith('packages/'))
    return { key, name, where, kind: 'own', pkg: '' };
  return { key, name, where, kind: 'node', pkg: 'other' };
}

const sourceMaps = new Map<string, SourceMap | undefined>();

/** Where a bundled position came from, as a repository-relative path and a 0-based line. */
function fromSourceMap(
  path: string,
  frame: { lineNumber: number; columnNumber?: number },
): { source: string; line: number } | undefined {
  if (!path.endsWith('.mjs') || frame.lineNumber < 0) return undefined;
  if (!sourceMaps.has(path)) {
    const file = `${path}.map`;
    sourceMaps.set(
      path,
      existsSync(file) ? new SourceMap(JSON.parse(readFileSync(file, 'utf8')) as never) : undefined,
    );
  }
  const entry = sourceMaps.get(path)?.findEntry(frame.lineNumber, frame.columnNumber ?? 0) as
    { originalSource?: string; originalLine?: number } | undefined;
  if (!entry?.originalSource) return undefined;
  // Sources are named relative to the repository's dist/ folder, where the bundle was built.
  const source = entry.originalSource.replace(/^(?:file:\/\/)?(?:.*?\/)?(?=(?:packages|services)\/)/, '');
  return { source, line: entry.originalLine ?? 0 };
}

export function profileMarkdown(
  summary: ProfileSummary,
  source: string,
  perWindow: Array<{ name: string; summary: ProfileSummary }> = [],
): string {
  const table = (title: string, rows: ProfileRow[], withWhere: boolean) => {
    const out = [`### ${title}`, ''];
    out.push(withWhere ? '| function | where | ms | % of busy |' : '| what | ms | % of busy |');
    out.push(withWhere ? '|---|---|---:|---:|' : '|---|---:|---:|');
    for (const r of rows)
      out.push(
        withWhere
          ? `| \`${r.name}\` | ${r.where} | ${r.ms} | ${r.share} |`
          : `| ${r.name} | ${r.ms} | ${r.share} |`,
      );
    out.push('');
    return out;
  };
  const windows = summary.windows.length
    ? [
        '### How busy the main thread was',
        '',
        '| phase | seconds | busy |',
        '|---|---:|---:|',
        ...summary.windows.map((w) => `| ${w.name} | ${w.seconds} | ${w.busyShare}% |`),
        '',
      ]
    : [];
  return [
    '## Gateway CPU profile',
    '',
    `${source}: ${summary.totalMs} ms sampled, ${summary.busyMs} ms busy (not idle). ` +
      'Code loaded through tsx is stripped of types and whitespace, so own functions are named by file only.',
    '',
    ...windows,
    ...table('Where busy time went', summary.categories, false),
    ...table(
      'Busy time by the innermost own-code file on the stack (its own work plus the libraries it called; ' +
        'otherwise by the outermost library on the stack)',
      summary.nearestOwnFile,
      false,
    ),
    ...perWindow.flatMap((w) => [
      ...table(`${w.name}: where busy time went`, w.summary.categories, false),
      ...table(
        `${w.name}: busy time by innermost own-code file or outermost library`,
        w.summary.nearestOwnFile,
        false,
      ),
    ]),
    ...table('Own code (services/, packages/), self time', summary.ownSelf, true),
    ...table('Own code, inclusive time (the function and everything it called)', summary.ownInclusive, true),
    ...table('Self time by package (dependencies and Node built-ins)', summary.packages, false),
    ...table('All functions, self time', summary.overallSelf, true),
  ].join('\n');
}
