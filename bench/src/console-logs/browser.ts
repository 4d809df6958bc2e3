/**
 * What runs in the page, for `pnpm bench:console`: these functions are handed to Chromium
 * (playwright serialises them), so they use the page's globals alone. The project's Node
 * typings have no DOM: `PageGlobals` names the little of it they use.
 */

/** What the page notes of one navigation, by its own clock (performance.now, from navigation start). */
export interface Marks {
  /** The first log row in the explorer's table, at the next animation frame. */
  firstRowMs: number | null;
  /** Rows in the table and "N logs shown" below it, at the next animation frame. */
  firstPageMs: number | null;
  /** N of "N logs shown". */
  rows: number;
  /** What the page shows instead of logs (an error, or none). */
  failed: string | null;
  /** GET /v1/logs calls of the page (resource timing): start and responseEnd. */
  logsCalls: Array<{ start: number; end: number }>;
}

interface PageElement {
  textContent: string | null;
  querySelector(selector: string): PageElement | null;
  querySelectorAll(selector: string): ArrayLike<PageElement> & Iterable<PageElement>;
}

interface PageGlobals {
  document: PageElement & { body: PageElement | null };
  requestAnimationFrame(callback: () => void): number;
  MutationObserver: new (callback: () => void) => {
    observe(target: unknown, options: { childList: boolean; subtree: boolean; characterData: boolean }): void;
  };
  performance: {
    now(): number;
    getEntriesByType(type: 'resource'): Array<{ name: string; startTime: number; responseEnd: number }>;
  };
  __benchMarks?: Marks;
}

/**
 * An init script: runs in the page before its own scripts, on every navigation, and watches the
 * document for the logs explorer's first row and first page, or for an error or "No logs match".
 */
export function watchExplorer(): void {
  const page = globalThis as unknown as PageGlobals;
  const marks: Marks = { firstRowMs: null, firstPageMs: null, rows: 0, failed: null, logsCalls: [] };
  page.__benchMarks = marks;
  let rowSeen = false;
  let pageSeen = false;
  new page.MutationObserver(() => {
    const doc = page.document;
    const alert = doc.querySelector('[role="alert"]');
    if (alert && !marks.failed) marks.failed = `the page shows an error: ${alert.textContent}`;
    if (!pageSeen && doc.body?.textContent?.includes('No logs match these filters'))
      marks.failed = 'the page shows no logs';
    const table = doc.querySelector('[role="table"][aria-label="Request logs"]');
    if (!table) return;
    const rendered = table.querySelectorAll('[role="rowgroup"] [role="row"]').length;
    if (rendered > 0 && !rowSeen) {
      rowSeen = true;
      page.requestAnimationFrame(() => (marks.firstRowMs = page.performance.now()));
    }
    if (rendered > 0 && !pageSeen) {
      const status = [...doc.querySelectorAll('[role="status"]')]
        .map((e) => /^([\d,]+) logs shown/.exec(e.textContent ?? ''))
        .find((m) => m !== null);
      if (status) {
        pageSeen = true;
        marks.rows = Number(status[1]!.replaceAll(',', ''));
        page.requestAnimationFrame(() => (marks.firstPageMs = page.performance.now()));
      }
    }
  }).observe(page.document, {
    childList: true,
    subtree: true,
    characterData: true,
  });
}

/** Whether the page has shown its first page of logs, or what it shows instead. */
export function explorerSettled(): boolean {
  const marks = (globalThis as unknown as PageGlobals).__benchMarks;
  return marks !== undefined && (marks.failed !== null || marks.firstPageMs !== null);
}

/** The page's marks, with its GET /v1/logs calls. */
export function readMarks(): Marks {
  const page = globalThis as unknown as PageGlobals;
  const marks = page.__benchMarks!;
  const logsCalls = page.performance
    .getEntriesByType('resource')
    .filter((e) => new URL(e.name).pathname === '/v1/logs')
    .map((e) => ({ start: e.startTime, end: e.responseEnd }));
  return { ...marks, logsCalls };
}
