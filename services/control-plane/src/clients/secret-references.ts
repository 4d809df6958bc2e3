import { AppError, BadRequest, Forbidden, NotFound, ServiceUnavailable } from '@switchyard/core';
import type { admin } from '@switchyard/proto';
import type { ServiceClient } from '@switchyard/runtime';
import type {
  SecretMappingInput,
  SecretMappingScope,
  SecretMappingSource,
  StoredSecretMapping,
} from '../domain/secret-mapping.schemas.ts';

/** How long admin may take to check or resolve one resource's mappings. */
const DEADLINE_MS = 3_000;

const toRequestMapping = (mapping: SecretMappingInput | StoredSecretMapping) => ({
  targetField: mapping.target_field,
  secretReferenceId: mapping.secret_reference_id,
  secretKey: mapping.secret_key ?? '',
  valueFormat: mapping.value_format ?? '',
  jsonPointer: mapping.json_pointer ?? '',
});

/** Admin's param (`mappings[2].secret_reference_id`) as the resource's API spells it (`secret_mappings[2]...`). */
function paramOf(adminParam: string | null, param: string): string {
  const at = /^(?:secret_)?mappings(\[\d+\].*)$/.exec(adminParam ?? '');
  return at ? `${param}${at[1]}` : param;
}

/** A refusal of admin's as this resource's: the same status and code, the param its own. */
function asOwnError(err: unknown, param: string): unknown {
  if (!(err instanceof AppError)) {
    return new ServiceUnavailable('Secret references cannot be checked now: admin is unreachable.', {
      cause: err,
    });
  }
  if (err.status >= 500) return err;
  const options = { param: paramOf(err.param, param), code: err.code ?? undefined, cause: err };
  if (err.status === 404)
    return new NotFound(err.message, { ...options, code: options.code ?? 'secret_reference_not_found' });
  if (err.status === 403) return new Forbidden(err.message, options);
  return new BadRequest(err.message, options);
}

/**
 * Admin's SecretReferenceService, over the service-to-service channel. Without a client (admin
 * not given to this process) mappings are refused with a 503, and resources without any work on.
 */
export class SecretReferenceMappings implements SecretMappingSource {
  constructor(private readonly client: ServiceClient<typeof admin.SecretReferenceService> | undefined) {}

  async check(
    scope: SecretMappingScope,
    mappings: readonly SecretMappingInput[],
    param: string,
  ): Promise<StoredSecretMapping[]> {
    if (mappings.length === 0) return [];
    let answer;
    try {
      answer = await this.available().resolveSecretMappings(
        {
          organisationId: scope.organisationId,
          workspaceId: scope.workspaceId ?? '',
          mappings: mappings.map(toRequestMapping),
          checkOnly: true,
        },
        { deadlineMs: DEADLINE_MS },
      );
    } catch (err) {
      throw asOwnError(err, param);
    }
    // Admin answers the mappings in the order asked, each reference by its id.
    return mappings.map((mapping, i) => ({
      target_field: mapping.target_field,
      secret_reference_id: answer.mappings[i]?.secretReferenceId || mapping.secret_reference_id,
      secret_key: mapping.secret_key ?? null,
      value_format: mapping.value_format ?? null,
      json_pointer: mapping.json_pointer ?? null,
    }));
  }

  async resolve(
    scope: SecretMappingScope,
    mappings: readonly StoredSecretMapping[],
  ): Promise<Record<string, string>> {
    if (mappings.length === 0) return {};
    const answer = await this.available().resolveSecretMappings(
      {
        organisationId: scope.organisationId,
        workspaceId: scope.workspaceId ?? '',
        mappings: mappings.map(toRequestMapping),
        checkOnly: false,
      },
      { deadlineMs: DEADLINE_MS },
    );
    for (const mapping of mappings) {
      if (answer.values[mapping.target_field] === undefined) {
        throw new ServiceUnavailable(`Admin gave no value for '${mapping.target_field}'.`);
      }
    }
    return answer.values;
  }

  private available(): ServiceClient<typeof admin.SecretReferenceService> {
    if (!this.client) {
      throw new ServiceUnavailable(
        'Secret references are not reachable from this service: admin is not configured.',
        {
          param: 'secret_mappings',
        },
      );
    }
    return this.client;
  }
}
