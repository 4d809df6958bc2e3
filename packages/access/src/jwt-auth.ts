import { createHash, createPublicKey, type JsonWebKey, type KeyObject } from 'node:crypto';
import type { Request } from 'express';
import { Strategy as JwtStrategy, type VerifiedCallback } from 'passport-jwt';
import { z } from 'zod';
import { callerDefaults, type Principal } from './principal.ts';
import { env } from '@switchyard/core';
import { DATA_PLANE_SCOPES, isScope, kindCanHold, type Scope } from './scopes.ts';

/** Only signatures checked with a published public key: no `none`, no shared-secret HMAC. */
export const JWT_ALGORITHMS = [
  'RS256',
  'RS384',
  'RS512',
  'PS256',
  'PS384',
  'PS512',
  'ES256',
  'ES384',
  'ES512',
] as const;
type JwtAlgorithm = (typeof JWT_ALGORITHMS)[number];

const mapping = z.preprocess(
  (value) => {
    if (value === undefined || value === '') return {};
    try {
      return JSON.parse(String(value));
    } catch {
      return value;
    }
  },
  z.record(z.string().min(1), z.string().min(1), {
    error: 'expected a JSON object of subject → workspace slug',
  }),
);

const issuerAndAudience = {
  description: 'accepted `iss` / `aud` values, comma-separated; empty: not checked',
};

/**
 * JWT authentication of this deployment, read by every service that authenticates callers.
 * Off while `JWT_JWKS_URIS` is empty. Tokens act in one organisation, the deployment's.
 */
export const jwtEnvSchema = z
  .object({
    JWT_JWKS_URIS: env
      .list()
      .pipe(z.array(z.url({ protocol: /^https?$/ })))
      .meta({
        description:
          'comma-separated JWKS URIs; empty: JWT authentication is off. Their keys are fetched in parallel, merged (the first URI wins a shared `kid`), cached, and fetched again when a token names an unknown `kid`',
      }),
    JWT_ORGANISATION: env
      .optionalString()
      .pipe(z.string().min(1).max(128).optional())
      .meta({ description: 'the organisation (id or slug) tokens act in; required with `JWT_JWKS_URIS`' }),
    JWT_ALGORITHMS: env
      .list()
      .transform((list) => (list.length > 0 ? list : ['RS256', 'ES256']))
      .pipe(z.array(z.enum(JWT_ALGORITHMS)))
      .meta({
        description: 'allow-list of signature algorithms (`RS*`, `PS*`, `ES*`; no `none`, no HMAC)',
      }),
    JWT_ISSUER: env.list().meta(issuerAndAudience),
    JWT_AUDIENCE: env.list().meta(issuerAndAudience),
    JWT_CLOCK_TOLERANCE_SECONDS: env.int(30, 0, 300).meta({ description: 'leeway for `exp` and `nbf`' }),
    JWT_JWKS_CACHE_SECONDS: env.int(600, 1, 86_400).meta({
      description: 'how long fetched keys are kept before they are fetched again',
    }),
    JWT_JWKS_REFRESH_COOLDOWN_SECONDS: env.int(30, 0, 3_600).meta({
      description: 'least time between fetches caused by unknown key ids',
    }),
    JWT_SUBS_ALLOWED: env.list().meta({
      description:
        '`jwt_subs_allowed`: the subjects admitted, comma-separated; empty: any subject (a gateway running as a `DEPLOYMENT` takes this from the deployment)',
    }),
    JWT_SUB_WORKSPACE_MAPPING: mapping.meta({
      description:
        "`jwt_sub_workspace_mapping`: JSON object subject → workspace slug, taking precedence over the token's `workspace` claim (a gateway running as a `DEPLOYMENT` takes this from the deployment)",
    }),
    JWT_WORKSPACES_ALLOWED: env.list().meta({
      description:
        '`workspaces_allowed`: workspace slugs or ids tokens may act in; empty: any workspace (a gateway running as a `DEPLOYMENT` takes this from the deployment)',
    }),
  })
  .refine((v) => v.JWT_JWKS_URIS.length === 0 || v.JWT_ORGANISATION !== undefined, {
    error:
      'JWT_ORGANISATION (an organisation id or slug) is required with JWT_JWKS_URIS: the organisation the tokens act in',
    path: ['JWT_ORGANISATION'],
  });
export type JwtEnv = z.output<typeof jwtEnvSchema>;

type FetchJson = (url: string, signal: AbortSignal) => Promise<unknown>;

const MAX_JWKS_BYTES = 1 << 20;

async function fetchJwks(url: string, signal: AbortSignal): Promise<unknown> {
  const res = await fetch(url, { signal, headers: { accept: 'application/json' }, redirect: 'error' });
  if (!res.ok) throw new Error(`JWKS ${url} answered ${res.status}`);
  const text = await res.text();
  if (text.length > MAX_JWKS_BYTES) throw new Error(`JWKS ${url} is larger than 1 MB`);
  return JSON.parse(text);
}

export interface JwksOptions {
  /** How long a fetched key set is used before it is fetched again (default 10 minutes). */
  ttlMs?: number;
  /** The least time between two fetches triggered by an unknown `kid` (default 30 s). */
  cooldownMs?: number;
  timeoutMs?: number;
  fetchJson?: FetchJson;
  now?: () => number;
}

/**
 * The public keys of one or several JWKS URIs: fetched in parallel, merged, kept for a
 * while, and fetched again when a token names a key id none of them has (at most once per
 * cooldown, so unknown ids cannot make the gateway hammer the identity provider). A URI that
 * fails keeps its last good keys.
 */
export class JwksKeySet {
  private keys = new Map<string, KeyObject>();
  private unnamed: KeyObject[] = [];
  private perUri = new Map<string, Array<{ kid: string | undefined; key: KeyObject }>>();
  private fetchedAt = -Infinity;
  private inflight: Promise<void> | undefined;
  private readonly ttlMs: number;
  private readonly cooldownMs: number;
  private readonly timeoutMs: number;
  private readonly fetchJson: FetchJson;
  private readonly now: () => number;

  constructor(
    private readonly uris: readonly string[],
    options: JwksOptions = {},
  ) {
    this.ttlMs = options.ttlMs ?? 600_000;
    this.cooldownMs = options.cooldownMs ?? 30_000;
    this.timeoutMs = options.timeoutMs ?? 5_000;
    this.fetchJson = options.fetchJson ?? fetchJwks;
    this.now = options.now ?? Date.now;
  }

  /** The key a token's header names; without a `kid`, the one key there is. */
  async key(kid: string | undefined): Promise<KeyObject | undefined> {
    const age = this.now() - this.fetchedAt;
    if (age > this.ttlMs) await this.refresh();
    let found = this.lookup(kid);
    if (!found && this.now() - this.fetchedAt >= this.cooldownMs) {
      await this.refresh();
      found = this.lookup(kid);
    }
    return found;
  }

  private lookup(kid: string | undefined): KeyObject | undefined {
    if (kid !== undefined) return this.keys.get(kid);
    const all = [...this.keys.values(), ...this.unnamed];
    return all.length === 1 ? all[0] : undefined;
  }

  private refresh(): Promise<void> {
    this.inflight ??= this.load().finally(() => {
      this.inflight = undefined;
    });
    return this.inflight;
  }

  private async load(): Promise<void> {
    const results = await Promise.allSettled(
      this.uris.map(async (uri) => ({
        uri,
        keys: parseJwks(await this.fetchJson(uri, AbortSignal.timeout(this.timeoutMs))),
      })),
    );
    for (const result of results) {
      if (result.status === 'fulfilled') this.perUri.set(result.value.uri, result.value.keys);
    }
    const keys = new Map<string, KeyObject>();
    const unnamed: KeyObject[] = [];
    for (const uri of this.uris) {
      for (const { kid, key } of this.perUri.get(uri) ?? []) {
        if (kid === undefined) unnamed.push(key);
        else if (!keys.has(kid)) keys.set(kid, key);
      }
    }
    this.keys = keys;
    this.unnamed = unnamed;
    this.fetchedAt = this.now();
  }
}

/** The signing keys of a JWKS document; keys that are not public signature keys are left out. */
function parseJwks(document: unknown): Array<{ kid: string | undefined; key: KeyObject }> {
  const list = (document as { keys?: unknown })?.keys;
  if (!Array.isArray(list)) throw new Error('a JWKS document has a "keys" array');
  const keys: Array<{ kid: string | undefined; key: KeyObject }> = [];
  for (const jwk of list as Array<Record<string, unknown>>) {
    if (!jwk || typeof jwk !== 'object' || (jwk.use !== undefined && jwk.use !== 'sig')) continue;
    if ('d' in jwk) continue; // a private key has no place in a JWKS
    try {
      const key = createPublicKey({ key: jwk as JsonWebKey, format: 'jwk' });
      keys.push({ kid: typeof jwk.kid === 'string' ? jwk.kid : undefined, key });
    } catch {
      // Not a key this runtime can use: skip it, keep the others.
    }
  }
  return keys;
}

/** Whether a bearer token is shaped like a JWS compact serialisation (three base64url parts). */
export function looksLikeJwt(token: string): boolean {
  return token.length < 16_384 && /^[\w-]+\.[\w-]+\.[\w-]*$/.test(token);
}

function headerOf(raw: string): { kid?: unknown; alg?: unknown } {
  try {
    return JSON.parse(Buffer.from(raw.slice(0, raw.indexOf('.')), 'base64url').toString('utf8')) as {
      kid?: unknown;
    };
  } catch {
    return {};
  }
}

export interface JwtClaims {
  sub?: unknown;
  iss?: unknown;
  exp?: unknown;
  scope?: unknown;
  scopes?: unknown;
  workspace?: unknown;
}

/**
 * A workspace of an organisation, both named by id or slug, with the slug of the config its
 * `defaults.config` names (null for none).
 */
export type WorkspaceLookup = (
  organisation: string,
  workspace: string,
) => Promise<{
  id: string;
  slug: string;
  organisationId: string;
  organisationCreatedAt: number | null;
  defaultConfig: string | null;
} | null>;

/** A stable id for a token's subject, shaped as a UUID: request logs and usage counters key by it. */
function subjectId(organisationId: string, issuer: string, subject: string): string {
  const hex = createHash('sha256').update(`jwt\0${organisationId}\0${issuer}\0${subject}`).digest('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-5${hex.slice(13, 16)}-${((parseInt(hex[16]!, 16) & 3) | 8).toString(16)}${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}

/** Scopes a token grants: those it names that a workspace caller can hold; without any named, the model-call scopes but `agents.invoke`, which a token must grant by name. */
export function tokenScopes(claims: JwtClaims): Scope[] {
  const named =
    typeof claims.scope === 'string'
      ? claims.scope.split(' ')
      : Array.isArray(claims.scopes)
        ? claims.scopes.filter((s): s is string => typeof s === 'string')
        : undefined;
  if (named === undefined) return DATA_PLANE_SCOPES.filter((s) => s !== 'agents.invoke');
  return [...new Set(named)].filter((s): s is Scope => isScope(s) && kindCanHold('workspace_user', s));
}

/**
 * Which tokens a deployment admits: the subjects (empty: any), the workspace each subject maps
 * to (over the token's `workspace` claim) and the workspaces tokens may act in (null: any).
 * From the environment (`JWT_SUBS_ALLOWED` …) or, for a gateway running as a named deployment,
 * from that deployment's `auth_settings`.
 */
export interface JwtAdmission {
  subsAllowed: readonly string[];
  subWorkspaceMapping: Readonly<Record<string, string>>;
  workspacesAllowed: readonly string[] | null;
}

/** The admission the environment's allow-lists describe. */
export function envAdmission(settings: JwtEnv): JwtAdmission {
  return {
    subsAllowed: settings.JWT_SUBS_ALLOWED,
    subWorkspaceMapping: settings.JWT_SUB_WORKSPACE_MAPPING,
    workspacesAllowed: settings.JWT_WORKSPACES_ALLOWED.length > 0 ? settings.JWT_WORKSPACES_ALLOWED : null,
  };
}

/**
 * Who a verified token speaks for, or null when the deployment does not admit it: its
 * subject must be allowed, and its workspace (the deployment's mapping for the subject, else
 * the token's `workspace` claim) must exist and be allowed. Without an admission (a gateway
 * that has not yet received its deployment's settings) no token is admitted.
 */
export async function jwtPrincipal(
  claims: JwtClaims,
  organisation: string | undefined,
  admission: JwtAdmission | undefined,
  workspaces: WorkspaceLookup,
): Promise<Principal | null> {
  if (!organisation || !admission || typeof claims.sub !== 'string' || claims.sub.length === 0) return null;
  // A token that never expires is refused: a leaked one would work for ever.
  if (typeof claims.exp !== 'number') return null;
  const subject = claims.sub;
  if (admission.subsAllowed.length > 0 && !admission.subsAllowed.includes(subject)) return null;
  const named = Object.hasOwn(admission.subWorkspaceMapping, subject)
    ? admission.subWorkspaceMapping[subject]
    : claims.workspace;
  if (typeof named !== 'string' || named.length === 0 || named.length > 256) return null;
  const workspace = await workspaces(organisation, named);
  if (!workspace) return null;
  const allowed = admission.workspacesAllowed;
  if (allowed !== null && !allowed.includes(workspace.slug) && !allowed.includes(workspace.id)) return null;
  const issuer = typeof claims.iss === 'string' ? claims.iss : '';
  const organisationId = workspace.organisationId;
  const defaults = callerDefaults(workspace.defaultConfig);
  return {
    apiKeyId: subjectId(organisationId, issuer, subject),
    organisationId,
    workspaceId: workspace.id,
    workspaceSlug: workspace.slug,
    kind: 'workspace_user',
    scopes: tokenScopes(claims),
    expiresAt: typeof claims.exp === 'number' ? claims.exp * 1000 : null,
    userId: null,
    name: `jwt:${subject}`,
    organisationCreatedAt: workspace.organisationCreatedAt,
    authMethod: 'jwt',
    ...(defaults ? { defaults } : {}),
  };
}

export interface JwtStrategyOptions extends JwksOptions {
  /** The admission in force at each token (default: the environment's allow-lists). */
  admission?: () => JwtAdmission | undefined;
}

/** The passport strategy for bearer JWTs, or undefined when the deployment has no JWKS URIs. */
export function jwtStrategy(
  settings: JwtEnv,
  workspaces: WorkspaceLookup,
  options: JwtStrategyOptions = {},
): JwtStrategy | undefined {
  if (settings.JWT_JWKS_URIS.length === 0) return undefined;
  const { admission: admissionOption, ...jwksOptions } = options;
  const fromEnv = envAdmission(settings);
  const admission = admissionOption ?? (() => fromEnv);
  const keys = new JwksKeySet(settings.JWT_JWKS_URIS, {
    ttlMs: settings.JWT_JWKS_CACHE_SECONDS * 1000,
    cooldownMs: settings.JWT_JWKS_REFRESH_COOLDOWN_SECONDS * 1000,
    ...jwksOptions,
  });
  return new JwtStrategy(
    {
      jwtFromRequest: (req: Request) => {
        const header = req.headers.authorization;
        if (!header || !/^bearer\s+/i.test(header)) return null;
        const token = header.replace(/^bearer\s+/i, '').trim();
        return looksLikeJwt(token) ? token : null;
      },
      secretOrKeyProvider: (
        _req: unknown,
        raw: string,
        done: (err: unknown, key?: string | Buffer) => void,
      ) => {
        const { kid } = headerOf(raw);
        keys.key(typeof kid === 'string' ? kid : undefined).then(
          (key) => (key ? done(null, key as unknown as Buffer) : done(new Error('no key for this token'))),
          (err: unknown) => done(err),
        );
      },
      algorithms: settings.JWT_ALGORITHMS as JwtAlgorithm[],
      ...(settings.JWT_ISSUER.length > 0 ? { issuer: settings.JWT_ISSUER } : {}),
      ...(settings.JWT_AUDIENCE.length > 0 ? { audience: settings.JWT_AUDIENCE } : {}),
      jsonWebTokenOptions: { clockTolerance: settings.JWT_CLOCK_TOLERANCE_SECONDS },
    },
    (claims: JwtClaims, done: VerifiedCallback) => {
      jwtPrincipal(claims, settings.JWT_ORGANISATION, admission(), workspaces).then(
        (principal) => done(null, principal ?? false),
        (err: unknown) => done(err),
      );
    },
  );
}
