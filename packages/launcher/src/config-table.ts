// The configuration table of the README, generated from the schemas every process parses its
// environment with (see process-settings.ts and scripts/config-table.ts).
import { z } from 'zod';
import { isServiceName, serviceNames } from '@switchyard/runtime';
import type { ProcessName, ProcessSettings } from './process-settings.ts';

export const tableStart = '<!-- configuration-table:start -->';
export const tableEnd = '<!-- configuration-table:end -->';

/** The schemas cannot be tabled: a setting without a description, or described two ways. */
export class ConfigTableError extends Error {
  override name = 'ConfigTableError';
}

/** The file has no region between the two marker lines. */
export class MissingMarkersError extends Error {
  override name = 'MissingMarkersError';
}

interface Setting {
  name: string;
  /** Each description the variable has, with the processes whose schema gives it. */
  descriptions: Map<string, ProcessName[]>;
  /** The processes that read it, in table order, each with its default as shown. */
  defaults: Map<ProcessName, string>;
}

interface Row {
  names: string[];
  readers: string;
  defaultValue: string;
  description: string;
}

/**
 * The markdown table: one row per variable (consecutive variables that share their readers,
 * default and description share a row), in the order the processes and their schemas declare
 * them. Throws a ConfigTableError naming every setting without a description.
 */
export function configurationTable(processes: readonly ProcessSettings[]): string {
  const settings = new Map<string, Setting>();
  const problems: string[] = [];
  for (const { service, schema } of processes) {
    for (const [name, field] of Object.entries(schema.shape as Record<string, z.ZodType>)) {
      const description = z.globalRegistry.get(field)?.description?.trim();
      if (!description) {
        problems.push(`${name} (read by ${service}) has no description: add .meta({ description }) to it`);
        continue;
      }
      let setting = settings.get(name);
      if (!setting) {
        setting = { name, descriptions: new Map(), defaults: new Map() };
        settings.set(name, setting);
      }
      setting.descriptions.set(description, [...(setting.descriptions.get(description) ?? []), service]);
      if (!setting.defaults.has(service)) setting.defaults.set(service, defaultOf(field));
    }
  }
  for (const setting of settings.values()) {
    if (setting.descriptions.size > 1) {
      const ways = [...setting.descriptions].map(([text, by]) => `${by.join(', ')}: "${text}"`);
      problems.push(`${setting.name} is described differently (${ways.join('; ')}): give it one description`);
    }
  }
  if (problems.length > 0) {
    throw new ConfigTableError(`cannot generate the configuration table:\n  ${problems.join('\n  ')}`);
  }

  const rows: Row[] = [];
  for (const setting of settings.values()) {
    const row: Row = {
      names: [setting.name],
      readers: readersColumn([...setting.defaults.keys()]),
      defaultValue: defaultColumn(setting.defaults),
      description: [...setting.descriptions.keys()][0] ?? '',
    };
    const previous = rows.at(-1);
    if (
      previous &&
      previous.readers === row.readers &&
      previous.defaultValue === row.defaultValue &&
      previous.description === row.description
    ) {
      previous.names.push(setting.name);
    } else rows.push(row);
  }
  return [
    '| variable | used by | default | meaning |',
    '|---|---|---|---|',
    ...rows.map((row) =>
      tableRow([row.names.map((n) => `\`${n}\``).join(', '), row.readers, row.defaultValue, row.description]),
    ),
  ].join('\n');
}

/** The default a process applies when the variable is unset, as the table shows it. */
function defaultOf(field: z.ZodType): string {
  const parsed = field.safeParse(undefined);
  if (!parsed.success) return 'required';
  const value: unknown = parsed.data;
  if (value === undefined) return 'none';
  if (value === '' || (Array.isArray(value) && value.length === 0)) return 'empty';
  if (Array.isArray(value)) return `\`${value.join(',')}\``;
  if (typeof value === 'object' && value !== null) return `\`${JSON.stringify(value)}\``;
  return `\`${String(value)}\``;
}

function processLabel(process: string): string {
  return process === 'migrate' || process === 'bootstrap' ? `\`${process}\`` : process;
}

function readersColumn(readers: ProcessName[]): string {
  const everyService = serviceNames.every((name) => readers.includes(name));
  const shown = everyService ? ['every service', ...readers.filter((r) => !isServiceName(r))] : readers;
  return shown.map(processLabel).join(', ');
}

/**
 * The most common default, then the others with the processes that apply them. Defaults that
 * differ only by naming their own process (`switchyard-gateway`) are shown once, with
 * `<service>` in its place.
 */
function defaultColumn(defaults: Map<ProcessName, string>): string {
  const entries = [...defaults];
  const templated = entries.map(
    ([process, value]) => [process, value.replaceAll(process, '<service>')] as const,
  );
  const distinct = (list: ReadonlyArray<readonly [ProcessName, string]>) =>
    new Set(list.map(([, v]) => v)).size;
  const shown = distinct(entries) > 1 && distinct(templated) === 1 ? templated : entries;
  const byValue = new Map<string, ProcessName[]>();
  for (const [process, value] of shown) byValue.set(value, [...(byValue.get(value) ?? []), process]);
  const ranked = [...byValue].sort((a, b) => b[1].length - a[1].length);
  const [main, ...others] = ranked;
  if (!main) return '';
  if (others.length === 0) return main[0];
  const exceptions = others.map(
    ([value, processes]) => `${processes.map(processLabel).join(', ')}: ${value}`,
  );
  return `${main[0]} (${exceptions.join('; ')})`;
}

function tableRow(cells: string[]): string {
  return `| ${cells.map((cell) => cell.replace(/\s+/g, ' ').replaceAll('|', '\\|')).join(' | ')} |`;
}

/** Where the region between the marker lines begins and ends, as line indexes of the markers. */
function region(lines: string[]): { start: number; end: number } {
  const start = lines.findIndex((line) => line.trim() === tableStart);
  const end = start < 0 ? -1 : lines.findIndex((line, i) => i > start && line.trim() === tableEnd);
  if (start < 0 || end < 0) {
    throw new MissingMarkersError(
      `no configuration table region: put the lines ${tableStart} and ${tableEnd} where the table goes`,
    );
  }
  return { start, end };
}

/** `text` with the table in place of whatever its marked region held. */
export function withConfigurationTable(text: string, table: string): string {
  const lines = text.split('\n');
  const { start, end } = region(lines);
  return [...lines.slice(0, start + 1), '', table, '', ...lines.slice(end)].join('\n');
}
