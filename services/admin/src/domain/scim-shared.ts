import { BadRequest } from '@switchyard/core';
import type { ScimRepository } from '../store/scim.repository.ts';

/** What the SCIM services share: id checks, PATCH value rules and a group's members. */

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
export const isUuid = (value: string) => UUID.test(value);

/** One operation of a SCIM PatchOp request (RFC 7644 section 3.5.2). */
export interface PatchOperation {
  op: 'add' | 'remove' | 'replace';
  path?: string | undefined;
  value?: unknown;
}

export function invalidPatch(message: string, path = 'Operations'): BadRequest {
  return new BadRequest(message, { param: path, code: 'invalidValue' });
}

export function textValue(value: unknown, path: string, nullable: boolean): string | null {
  if (value === null && nullable) return null;
  if (typeof value === 'string' && value.trim() !== '' && value.length <= 1024) return value.trim();
  throw invalidPatch(`Invalid PATCH value for '${path}': must be a string of 1 to 1024 characters.`, path);
}

/** The user ids of a group's members. */
export async function membersOfGroup(repo: ScimRepository, groupId: string): Promise<string[]> {
  return (await repo.membersOf([groupId])).get(groupId) ?? [];
}
