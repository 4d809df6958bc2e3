import { z } from 'zod';
import { BadRequest } from '@switchyard/core';
import type { ScimUserInput } from '../domain/scim-users.service.ts';
import {
  GROUP_FILTER_ATTRIBUTES,
  USER_FILTER_ATTRIBUTES,
  type ScimEquality,
} from '../store/scim.repository.ts';

const text = (max: number) => z.string().trim().min(1).max(max);
const email = z.string().trim().max(320).pipe(z.email());

/** Booleans, and the `"True"`/`"False"` strings some identity providers send. */
const scimBoolean = z.union([
  z.boolean(),
  z
    .string()
    .regex(/^(true|false)$/i, 'a boolean')
    .transform((value) => value.toLowerCase() === 'true'),
]);

/** Unknown attributes (roles, enterprise extensions) are accepted and not kept, as SCIM clients expect. */
export const scimUserBody = z
  .object({
    schemas: z.array(z.string().max(256)).max(16).optional(),
    userName: text(320),
    externalId: text(1024).nullable().optional(),
    displayName: text(255).nullable().optional(),
    name: z
      .object({
        givenName: text(255).nullable().optional(),
        familyName: text(255).nullable().optional(),
        formatted: z.string().max(512).nullable().optional(),
      })
      .nullable()
      .optional(),
    emails: z
      .array(
        z.object({
          value: email,
          primary: scimBoolean.optional(),
          type: z.string().max(64).optional(),
        }),
      )
      .max(16)
      .optional(),
    active: scimBoolean.default(true),
  })
  .transform((body, ctx): ScimUserInput => {
    const primary = body.emails?.find((e) => e.primary) ?? body.emails?.[0];
    const address = primary?.value ?? body.userName;
    if (!email.safeParse(address).success) {
      ctx.addIssue({
        code: 'custom',
        path: ['emails'],
        message: 'an email is needed: in emails, or as the userName',
      });
      return z.NEVER;
    }
    return {
      userName: body.userName,
      email: address,
      externalId: body.externalId ?? null,
      displayName: body.displayName ?? null,
      givenName: body.name?.givenName ?? null,
      familyName: body.name?.familyName ?? null,
      active: body.active,
    };
  });

export const scimGroupBody = z
  .object({
    schemas: z.array(z.string().max(256)).max(16).optional(),
    displayName: text(255),
    externalId: text(1024).nullable().optional(),
    members: z
      .array(z.object({ value: z.string().min(1).max(64), display: z.string().max(1024).optional() }))
      .max(10_000)
      .default([]),
  })
  .transform((body) => ({
    displayName: body.displayName,
    externalId: body.externalId ?? null,
    members: [...new Set(body.members.map((member) => member.value.toLowerCase()))],
  }));

export const scimPatchBody = z.object({
  schemas: z.array(z.string().max(256)).max(16).optional(),
  Operations: z
    .array(
      z.object({
        op: z
          .string()
          .trim()
          .toLowerCase()
          .pipe(z.enum(['add', 'remove', 'replace'])),
        path: z.string().min(1).max(512).optional(),
        value: z.unknown().optional(),
      }),
    )
    .min(1)
    .max(1000),
});

const index = (name: string, min: number, fallback: number) =>
  z
    .string()
    .regex(/^-?\d{1,9}$/, `${name} must be an integer`)
    .transform(Number)
    .optional()
    .transform((value) => Math.max(value ?? fallback, min));

/** `startIndex` counts from 1 (less is read as 1); `count` up to 1000 (default 100). */
export const scimListQuery = z.object({
  filter: z.string().max(1024).optional(),
  startIndex: index('startIndex', 1, 1),
  count: index('count', 0, 100).transform((count) => Math.min(count, 1000)),
});

const EQUALITY = /^\s*([A-Za-z][\w.]*(?:\[type eq "work"\]\.value)?)\s+eq\s+"((?:[^"\\]|\\.)*)"\s*$/i;

/** `attribute eq "value"`, for the attributes `allowed` names; other filters are a 400 (invalidFilter). */
export function parseEqualityFilter(
  filter: string | undefined,
  allowed: readonly string[],
): ScimEquality | null {
  if (filter === undefined || filter.trim() === '') return null;
  const match = EQUALITY.exec(filter);
  const attribute = match?.[1]?.toLowerCase();
  if (!match || !attribute || !allowed.includes(attribute)) {
    throw new BadRequest(
      `Invalid query parameter 'filter': only 'attribute eq "value"' is supported, on ${allowed.join(', ')}.`,
      { param: 'filter', code: 'invalidFilter' },
    );
  }
  return { attribute, value: match[2]!.replace(/\\(.)/g, '$1') };
}

export const userFilter = (filter: string | undefined) => parseEqualityFilter(filter, USER_FILTER_ATTRIBUTES);
export const groupFilter = (filter: string | undefined) =>
  parseEqualityFilter(filter, GROUP_FILTER_ATTRIBUTES);

/** A workspace role in any case (`Admin` is `admin`), kept lower-case. */
const workspaceRole = z
  .string({ error: 'must be admin, manager or member' })
  .trim()
  .toLowerCase()
  .pipe(z.enum(['admin', 'manager', 'member'], { error: 'must be admin, manager or member' }));

export const createScimMappingBody = z
  .strictObject({
    workspace_id: text(255),
    role: workspaceRole,
    scim_group_id: text(64).optional(),
    scim_group_name: text(255).optional(),
  })
  .superRefine((body, ctx) => {
    const given = [body.scim_group_id, body.scim_group_name].filter((v) => v !== undefined).length;
    if (given !== 1) {
      ctx.addIssue({
        code: 'custom',
        path: [body.scim_group_id === undefined ? 'scim_group_id' : 'scim_group_name'],
        message: 'give exactly one of scim_group_id or scim_group_name',
      });
    }
  });

export const issueScimTokenBody = z.strictObject({
  replace_existing: z.boolean().default(false),
});

/** `page` (from 0) and `page_size` (1 to 1000, default 100). */
export const scimAdminPage = z.object({
  page: z
    .string()
    .regex(/^\d{1,7}$/, 'must be an integer from 0')
    .transform(Number)
    .default(0),
  page_size: z
    .string()
    .regex(/^\d{1,4}$/, 'must be an integer from 1 to 1000')
    .transform(Number)
    .pipe(
      z.number().min(1, 'must be an integer from 1 to 1000').max(1000, 'must be an integer from 1 to 1000'),
    )
    .default(100),
});

export const listScimGroupsQuery = scimAdminPage.extend({ search: z.string().max(255).optional() });
