import type { Logger } from '@switchyard/core';
import type { MessageInitShape } from '@bufbuild/protobuf';
import type { batches } from '@switchyard/proto';
import type { GatewayRequest, Relayed } from './gateway-request.ts';

/** What the gateway tells control-plane of one batch; empty fields keep the stored value. */
export type BatchReport = Omit<MessageInitShape<typeof batches.BatchRecordSchema>, '$typeName'>;

/** Where the gateway keeps and finds the records of the batches created through it. */
export interface BatchRecordStore {
  /** Records the batch; never rejects (a failure is logged and counted). */
  record(report: BatchReport): Promise<void>;
  /** The workspace's record of a batch; null when it has none. Rejects with a 503 when it cannot tell. */
  find(organisationId: string, workspaceId: string, id: string): Promise<batches.BatchRecord | null>;
}

/** The batch operations whose answers are recorded, and the output route: by forwarded path (after `/v1`). */
export type BatchOperation = { kind: 'create' } | { kind: 'read' | 'cancel' | 'output'; id: string };

const BATCH_PATH = /^\/batches\/([^/]+)(\/cancel|\/output)?$/;

export function batchOperationOf(method: string, pathname: string): BatchOperation | undefined {
  if (method === 'POST' && pathname === '/batches') return { kind: 'create' };
  const match = BATCH_PATH.exec(pathname);
  if (!match) return undefined;
  const id = safeDecode(match[1]!);
  if (id === undefined) return undefined;
  if (method === 'GET' && match[2] === undefined) return { kind: 'read', id };
  if (method === 'POST' && match[2] === '/cancel') return { kind: 'cancel', id };
  if (method === 'GET' && match[2] === '/output') return { kind: 'output', id };
  return undefined;
}

function safeDecode(value: string): string | undefined {
  try {
    return decodeURIComponent(value);
  } catch {
    return undefined;
  }
}

/** A batch answer larger than this is not read for its record (an OpenAI batch is about 1 kB). */
const MAX_BATCH_ANSWER = 64 * 1024;
/** The longest id or status recorded; a longer one is not (control-plane keeps ids up to 256). */
const MAX_ID = 256;

const text = (value: unknown, max = MAX_ID): string =>
  typeof value === 'string' && value.length <= max ? value : '';

/**
 * What can be read of a batch answer, as a record of it: the OpenAI shape (`id`, `status`,
 * `endpoint`, `input_file_id`, `output_file_id`, `error_file_id`). A provider whose batches
 * differ gives what it has; fields it lacks stay empty (the stored value is kept). Undefined
 * when the answer is not a JSON object, or it names no batch id and the path gave none.
 */
export function batchFieldsOf(
  body: Buffer,
  pathId: string | undefined,
): Omit<BatchReport, 'organisationId' | 'workspaceId'> | undefined {
  if (body.length === 0 || body.length > MAX_BATCH_ANSWER) return undefined;
  let json: unknown;
  try {
    json = JSON.parse(body.toString('utf8'));
  } catch {
    return undefined;
  }
  if (typeof json !== 'object' || json === null || Array.isArray(json)) return undefined;
  const answer = json as Record<string, unknown>;
  if (answer.object !== undefined && answer.object !== 'batch') return undefined;
  const id = text(answer.id) || pathId || '';
  if (id === '' || (pathId !== undefined && id !== pathId)) return undefined;
  return {
    id,
    status: text(answer.status, 64),
    endpoint: text(answer.endpoint, 1024),
    inputFileId: text(answer.input_file_id),
    outputFileId: text(answer.output_file_id),
    errorFileId: text(answer.error_file_id),
  };
}

/**
 * The records of the batches created through the gateway. A batch answer that passed through
 * (create, read, cancel; 2xx JSON) is recorded in the background once the client has it: never
 * delaying or altering the answer, with a deadline, failures logged and counted.
 */
export class GatewayBatches {
  constructor(
    readonly store: BatchRecordStore,
    private readonly logger: Pick<Logger, 'warn'>,
  ) {}

  /** Records what the relayed answer tells of the batch, in the background. */
  observe(
    request: GatewayRequest,
    operation: BatchOperation,
    status: number,
    contentType: string,
    relayed: Relayed,
  ): void {
    if (operation.kind === 'output' || status < 200 || status >= 300 || !relayed.complete) return;
    if (!/json/i.test(contentType)) return;
    const copy = relayed.copy;
    setImmediate(() => {
      const fields = batchFieldsOf(copy, operation.kind === 'create' ? undefined : operation.id);
      if (!fields) return;
      void this.record(request, fields).catch((err: unknown) =>
        this.logger.warn('batch record not written', { error: String(err) }),
      );
    });
  }

  /** Records what is known of a batch, with where the request went and who sent it. */
  record(
    request: GatewayRequest,
    fields: Omit<BatchReport, 'organisationId' | 'workspaceId'>,
  ): Promise<void> {
    const target = request.target;
    const { principal } = request;
    return this.store.record({
      ...fields,
      organisationId: principal.organisationId,
      workspaceId: principal.workspaceId,
      // Only an API key is recorded: a JWT, OAuth or session caller has none of its own.
      apiKeyId: principal.authMethod === undefined ? principal.apiKeyId : '',
      provider: target?.provider ?? '',
      integrationSlug: target?.integrationSlug ?? '',
    });
  }
}
