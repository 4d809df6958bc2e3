import { randomUUID } from 'node:crypto';
import { Conflict, NotFound, UnprocessableEntity, type SecretBox } from '@switchyard/core';
import type { Principal, WorkspaceLookup } from '@switchyard/access';
import { EXPORT_FIELDS } from '@switchyard/rules';
import type { ExportFile, ExportFileStore } from '../files/export-files.ts';
import type { ExportScope, LogExport, LogExportRepository } from '../store/log-export.repository.ts';
import type { RequestLogFilter, RequestLogSearch } from '../store/request-log.search.ts';
import type { CreateExportInput, ExportFilters, UpdateExportInput } from './log-exports.schemas.ts';
import { exportFilters } from './log-exports.schemas.ts';

/** How long counting an export's logs may take; past it the total is left as it was (0 when new). */
const COUNT_DEADLINE_MS = 10_000;
/** What signed download links are signed for (see SecretBox.mac). */
const LINK_PURPOSE = 'log export download';

/** The fields an organisation denies exporting, from its settings (admin). */
export type DeniedFieldsSource = (organisationId: string) => Promise<string[]>;

/** A download link: where and until when. */
export interface DownloadLink {
  url: string;
  expiresAt: Date;
}

export interface LogExportOptions {
  files: ExportFileStore;
  /** Signs and checks the download links log-export serves itself (a volume's files). */
  box: Pick<SecretBox, 'mac' | 'verifyMac'>;
  linkTtlSeconds: number;
  workspaces?: WorkspaceLookup | undefined;
  /** Tells the runner an export was started, so that it need not wait for its next look. */
  started?: () => void;
  now?: () => Date;
}

/** The file of an export's run: one per export, replaced by each run that finishes. */
export function exportFileKey(record: Pick<LogExport, 'organisationId' | 'id'>): string {
  return `${record.organisationId}/${record.id}.jsonl`;
}

/** The filters an export stored (wire form) as a request log filter of its organisation and workspace. */
export function filterOf(
  record: Pick<LogExport, 'organisationId' | 'workspaceId' | 'filters'>,
  to: Date,
): RequestLogFilter {
  // Stored as validated; parsed again to have them in their typed form.
  const f: ExportFilters = exportFilters.parse(record.filters);
  return {
    organisationId: record.organisationId,
    workspaceId: record.workspaceId,
    from: f.time_of_generation_min ?? new Date(0),
    to: f.time_of_generation_max ?? to,
    statuses: f.status_code,
    models: f.ai_model,
    providers: f.ai_org,
    providerModels: f.ai_org_model,
    traceId: f.trace_id,
    metadata: f.metadata,
    apiKeyId: f.api_key_id,
    costMin: f.cost_min,
    costMax: f.cost_max,
    latencyMin: f.response_time_min,
    latencyMax: f.response_time_max,
    cacheStatuses: f.cache_status,
    guardrailActions: f.guardrail_action,
    policyDecisions: f.policy_decision,
    totalTokensMin: f.total_units_min,
    totalTokensMax: f.total_units_max,
    promptTokensMin: f.prompt_token_min,
    promptTokensMax: f.prompt_token_max,
    completionTokensMin: f.completion_token_min,
    completionTokensMax: f.completion_token_max,
    integrationSlugs: f.virtual_keys,
    configSlugs: f.configs,
    weightedFeedbackMin: f.weighted_feedback_min,
    weightedFeedbackMax: f.weighted_feedback_max,
  };
}

const notFound = (id: string) => new NotFound(`Log export '${id}' not found.`);

/**
 * Log exports: made as drafts, started, cancelled and archived here; run by ExportRunner. A
 * caller sees its organisation's exports, its workspace's when its key has one, and only its
 * own when it calls with a user's API key.
 */
export class LogExportService {
  private readonly now: () => Date;

  constructor(
    private readonly repo: LogExportRepository,
    private readonly search: Pick<RequestLogSearch, 'count'>,
    private readonly deniedFields: DeniedFieldsSource,
    private readonly options: LogExportOptions,
  ) {
    this.now = options.now ?? (() => new Date());
  }

  /** `filters` is the request's own JSON of `input.filters`: stored as the API took it. */
  async create(
    principal: Principal,
    input: CreateExportInput,
    filters: Record<string, unknown>,
  ): Promise<{ id: string; total: number }> {
    const workspaceId = await this.workspaceOf(principal, input.workspace_id);
    await this.refuseDenied(principal.organisationId, input.requested_data);
    const now = this.now();
    const record = {
      id: randomUUID(),
      organisationId: principal.organisationId,
      workspaceId,
      createdBy: principal.userId ?? principal.apiKeyId,
      userId: principal.userId,
      description: input.description ?? '',
      filters,
      requestedData: input.requested_data,
      status: 'draft' as const,
      total: 0,
      createdAt: now,
      lastUpdatedAt: now,
    };
    record.total = (await this.search.count(filterOf(record, now), COUNT_DEADLINE_MS)) ?? 0;
    await this.repo.insert(record);
    return { id: record.id, total: record.total };
  }

  /** `filters` is the request's own JSON of `input.filters`, when given. */
  async update(
    principal: Principal,
    id: string,
    input: UpdateExportInput,
    filters: Record<string, unknown> | undefined,
  ): Promise<{ id: string; total: number }> {
    const current = await this.get(principal, id);
    if (input.workspace_id !== undefined && input.workspace_id !== current.workspaceId) {
      throw new UnprocessableEntity("An export's workspace cannot change: make a new export.", {
        param: 'workspace_id',
        code: 'invalid_parameter',
      });
    }
    if (input.requested_data !== undefined) {
      await this.refuseDenied(principal.organisationId, input.requested_data);
    }
    const total =
      (await this.search.count(
        filterOf({ ...current, filters: filters ?? current.filters }, this.now()),
        COUNT_DEADLINE_MS,
      )) ?? undefined;
    const updated = await this.repo.update(
      this.scopeOf(principal),
      id,
      { filters, requestedData: input.requested_data, description: input.description, total },
      this.now(),
    );
    if (!updated) throw await this.whyNot(principal, id, 'changed');
    return { id: updated.id, total: updated.total };
  }

  async get(principal: Principal, id: string): Promise<LogExport> {
    const found = await this.repo.find(this.scopeOf(principal), id);
    if (!found) throw notFound(id);
    return found;
  }

  async list(
    principal: Principal,
    workspaceId: string | undefined,
    page: { limit: number; offset: number },
  ): Promise<[LogExport[], number]> {
    const scope = this.scopeOf(principal);
    if (workspaceId !== undefined) {
      if (scope.workspaceId !== null && scope.workspaceId !== workspaceId) return [[], 0];
      scope.workspaceId = workspaceId;
    }
    return this.repo.list(scope, page);
  }

  /** Runs the export (again, from the start); the fields it asks for are checked again, as settings may have changed. */
  async start(principal: Principal, id: string): Promise<LogExport> {
    const current = await this.get(principal, id);
    await this.refuseDenied(principal.organisationId, current.requestedData);
    const total =
      (await this.search.count(filterOf(current, this.now()), COUNT_DEADLINE_MS)) ?? current.total;
    const started = await this.repo.start(this.scopeOf(principal), id, total, this.now());
    if (!started) throw await this.whyNot(principal, id, 'started');
    this.options.started?.();
    return started;
  }

  async cancel(principal: Principal, id: string): Promise<LogExport> {
    const cancelled = await this.repo.cancel(this.scopeOf(principal), id, this.now());
    if (cancelled) return cancelled;
    const current = await this.get(principal, id);
    throw new Conflict(
      `Log export '${id}' is not running (it is ${current.status}): there is nothing to cancel.`,
      {
        code: 'export_not_running',
      },
    );
  }

  /** Archives an export that is not running, and removes its file. */
  async archive(principal: Principal, id: string): Promise<void> {
    const archived = await this.repo.archive(this.scopeOf(principal), id, this.now());
    if (!archived) throw await this.whyNot(principal, id, 'deleted');
    await this.options.files.delete(exportFileKey(archived));
  }

  /** A short-lived link to the file of a finished export: the bucket's own, else one log-export serves. */
  async download(principal: Principal, id: string, publicBase: string): Promise<DownloadLink> {
    const record = await this.get(principal, id);
    if (record.status !== 'success' || record.fileKey === null) {
      throw new Conflict(
        `Log export '${id}' has no file to download: it is ${record.status}${record.status === 'draft' ? ' (start it first)' : ''}.`,
        { code: 'export_not_ready' },
      );
    }
    const ttl = this.options.linkTtlSeconds;
    const expiresAt = new Date(this.now().getTime() + ttl * 1000);
    const filename = `log-export-${record.id}.jsonl`;
    const signed = await this.options.files.signedUrl(record.fileKey, filename, ttl);
    if (signed !== null) return { url: signed, expiresAt };
    const expires = Math.floor(expiresAt.getTime() / 1000);
    const token = `${record.run}.${expires}.${this.options.box.mac(LINK_PURPOSE, `${record.id}.${record.run}.${expires}`)}`;
    return {
      url: `${publicBase}/v1/logs/exports/${record.id}/file?token=${encodeURIComponent(token)}`,
      expiresAt,
    };
  }

  /**
   * The file a link log-export signed points at, when the link is genuine, unexpired, and the
   * export still holds that run's file; NotFound otherwise (a link says nothing about why).
   */
  async linkedFile(id: string, token: string): Promise<{ file: ExportFile; filename: string }> {
    const invalid = new NotFound('This download link is invalid or has expired: ask for a new one.', {
      code: 'export_link_invalid',
    });
    const match = /^(\d{1,9})\.(\d{1,12})\.([A-Za-z0-9_-]{43})$/.exec(token);
    if (!match) throw invalid;
    const [, run, expires, mac] = match as unknown as [string, string, string, string];
    if (!this.options.box.verifyMac(LINK_PURPOSE, `${id}.${run}.${expires}`, mac)) throw invalid;
    if (Number(expires) * 1000 <= this.now().getTime()) throw invalid;
    const record = await this.repo.findAny(id);
    if (!record || record.status !== 'success' || record.run !== Number(run) || record.fileKey === null) {
      throw invalid;
    }
    const file = await this.options.files.open(record.fileKey);
    if (!file) throw invalid;
    return { file, filename: `log-export-${record.id}.jsonl` };
  }

  /** The fields a workspace's exports may not hold: its organisation's denied fields. */
  async fieldRestrictions(
    principal: Principal,
    workspaceId: string | undefined,
  ): Promise<{ workspaceId: string | null; denied: string[]; allowed: string[] }> {
    const workspace = await this.workspaceOf(principal, workspaceId);
    const denied = new Set(await this.deniedFields(principal.organisationId));
    return {
      workspaceId: workspace,
      denied: EXPORT_FIELDS.filter((field) => denied.has(field)),
      allowed: EXPORT_FIELDS.filter((field) => !denied.has(field)),
    };
  }

  private async refuseDenied(organisationId: string, fields: readonly string[]): Promise<void> {
    const denied = new Set(await this.deniedFields(organisationId));
    const refused = fields.filter((field) => denied.has(field));
    if (refused.length > 0) {
      throw new UnprocessableEntity(
        `The organisation does not allow exporting ${refused.map((f) => `'${f}'`).join(', ')} (export_settings.deniedFields): leave ${refused.length === 1 ? 'it' : 'them'} out of requested_data.`,
        { param: 'requested_data', code: 'export_field_denied' },
      );
    }
  }

  /** Whose exports a caller sees (see the class). */
  private scopeOf(principal: Principal): ExportScope {
    return {
      organisationId: principal.organisationId,
      workspaceId: principal.workspaceId,
      userId: principal.kind === 'workspace_user' ? principal.userId : null,
    };
  }

  /** A workspace key's own workspace always (another it names is not found); an organisation key's, as named. */
  private async workspaceOf(principal: Principal, named: string | undefined): Promise<string | null> {
    if (principal.workspaceId !== null) {
      if (named !== undefined && named !== principal.workspaceId)
        throw new NotFound(`Workspace '${named}' not found.`);
      return principal.workspaceId;
    }
    if (named === undefined) return null;
    const lookup = this.options.workspaces;
    const found = lookup ? await lookup(principal.organisationId, named) : null;
    if (!found || found.organisationId !== principal.organisationId) {
      throw new NotFound(`Workspace '${named}' not found.`);
    }
    return found.id;
  }

  /** Why a change found no export to make: there is none (404), or it runs (409). */
  private async whyNot(
    principal: Principal,
    id: string,
    what: 'changed' | 'started' | 'deleted',
  ): Promise<Error> {
    if (!(await this.repo.find(this.scopeOf(principal), id))) return notFound(id);
    const after =
      what === 'started' ? 'it is running already' : 'cancel it first (POST /v1/logs/exports/{id}/cancel)';
    return new Conflict(`Log export '${id}' is running: it cannot be ${what} now; ${after}.`, {
      code: 'export_in_progress',
    });
  }
}
