import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import fc from 'fast-check';
import type { Admin } from '@switchyard/admin';
import { kindCanHold } from '@switchyard/access';
import type { Access, DeclaredRoute, HttpMethod } from '@switchyard/runtime';
import { startServiceHarness, type HarnessResponse, type ServiceHarness } from '@switchyard/testing';
import { allServices } from './services.ts';

/**
 * Hostile input on every write route the services declare: generated bodies, path parameters,
 * query strings and content types, sent with a key that may call the route, so that they reach
 * validation. Whatever arrives, the answer is below 500, a refusal is an error body in the
 * route's error shape, and a refused request leaves what the resource's reads show unchanged.
 * The routes come from the services, so a route added later is walked at once.
 */

/**
 * Fixed so that a failure reproduces (fast-check prints it, with the path to the case);
 * HOSTILE_INPUT_SEED and HOSTILE_INPUT_RUNS explore further than the test command does.
 */
const SEED = Number(process.env.HOSTILE_INPUT_SEED ?? 1_913_013);
/** Cases per route: the 73 routes walked in about 35 s on two cores (measured). */
const RUNS_PER_ROUTE = Number(process.env.HOSTILE_INPUT_RUNS ?? 60);
/** A well-formed id that names nothing. */
const NOTHING = '00000000-0000-4000-8000-000000000000';

const WRITE_METHODS: readonly HttpMethod[] = ['POST', 'PUT', 'PATCH', 'DELETE'];

/** One write route as the walker calls it. */
interface WriteRoute {
  method: HttpMethod;
  /** The path pattern, `:name` for parameters. */
  path: string;
  access: Access;
  /** The declared GET routes of the same service: where its effects can be read. */
  reads: string[];
}

/** Real resources the routes' parameters can name, so that a body is validated against something that exists. */
interface Fixture {
  workspaceId: string;
  organisationId: string;
  apiKeyId: string;
  configSlug: string;
  userId: string;
  integrationSlug: string;
  ssoClientId: string;
  emailDomain: string;
  scimMappingId: string;
  scimUserId: string;
  scimGroupId: string;
}

let h: ServiceHarness;
let fixture: Fixture;
let declared: WriteRoute[] = [];
const walked = new Set<string>();

const label = (route: Pick<WriteRoute, 'method' | 'path'>) => `${route.method} ${route.path}`;

/** The routes' write methods, and the write requests a route that serves any method describes. */
function writeRoutesOf(routes: DeclaredRoute[]): WriteRoute[] {
  const reads = routes.filter((r) => r.method === 'GET').map((r) => r.path);
  return routes.flatMap((route): WriteRoute[] => {
    if (route.method === 'ALL') {
      return route.examples
        .filter((e) => WRITE_METHODS.includes(e.method))
        .map((e) => ({ method: e.method, path: e.path, access: e.scope, reads: [] }));
    }
    if (!WRITE_METHODS.includes(route.method)) return [];
    if (route.scope === null)
      throw new Error(`${route.method} ${route.path}: a route with no scope and no examples`);
    return [{ method: route.method, path: route.path, access: route.scope, reads }];
  });
}

// ---------------------------------------------------------------------------------------------
// Hostile values, as JSON text (so that keys such as __proto__ and numbers JSON cannot round-trip
// in JavaScript are sent as written).

const LONE_SURROGATES = ['\ud800', '\udfff', '\ud83d'];
/** What text columns, JSON encoders and URL decoders choke on: most hostile strings hold one. */
const POISON = ['\u0000', ...LONE_SURROGATES];

const hostileString: fc.Arbitrary<string> = fc.oneof(
  {
    weight: 3,
    arbitrary: fc
      .tuple(fc.string({ maxLength: 8 }), fc.constantFrom(...POISON), fc.string({ maxLength: 8 }))
      .map((parts) => parts.join('')),
  },
  {
    weight: 2,
    arbitrary: fc.constantFrom(
      '',
      ' ',
      '%00',
      '%ff',
      '../../etc/passwd',
      '__proto__',
      'constructor',
      '\u202e\u{1f4a5}e\u0301',
      "' OR 1=1 --",
      '${7*7}{{7*7}}',
      'null',
      '-1',
      '1e309',
      'https://169.254.169.254/latest/meta-data/',
      'http://[::1]:1/',
    ),
  },
  {
    // Values that pass a format check yet sit at its edges: what the database or a parser may still refuse.
    weight: 1,
    arbitrary: fc.constantFrom(
      '0000-01-01T00:00:00Z',
      '9999-12-31T23:59:59.999Z',
      '2024-02-30T00:00:00Z',
      '1970-01-01T00:00:00-23:59',
      '00000000-0000-0000-0000-000000000000',
      'FFFFFFFF-FFFF-FFFF-FFFF-FFFFFFFFFFFF',
      'a@b.c',
      'xn--zz.example',
      'https://%ff',
      'https://[::1',
      `https://${'a'.repeat(300)}.example`,
    ),
  },
  { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 24 }) },
  { weight: 1, arbitrary: fc.constantFrom(300, 4_100, 70_000).map((n) => 'x'.repeat(n)) },
);

const hostileNumberText = fc.constantFrom(
  '1e308',
  '-1e308',
  '1e400',
  '-1e400',
  '5e-324',
  '-0',
  '9007199254740993',
  '123456789012345678901234567890',
  '2147483648',
  '-2147483649',
  '0.5',
  '-1',
  '0',
);

const HOSTILE_KEYS = [
  '__proto__',
  'constructor',
  'prototype',
  '',
  '\u0000',
  '\ud800',
  'a.b',
  'x'.repeat(2_000),
];

/** `{` or `[` nested `depth` times around a value. */
function nested(depth: number, open: '{' | '['): string {
  return open === '['
    ? `${'['.repeat(depth)}1${']'.repeat(depth)}`
    : `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`;
}

const { value: hostileJson } = fc.letrec<{ value: string }>((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    { weight: 4, arbitrary: hostileString.map((s) => JSON.stringify(s)) },
    { weight: 2, arbitrary: hostileNumberText },
    fc.constantFrom('true', 'false', 'null', '[]', '{}'),
    fc
      .tuple(fc.integer({ min: 20, max: 200 }), fc.constantFrom('{' as const, '[' as const))
      .map(([depth, open]) => nested(depth, open)),
    fc.array(tie('value'), { maxLength: 4 }).map((items) => `[${items.join(',')}]`),
    fc
      .array(fc.tuple(fc.oneof(fc.constantFrom(...HOSTILE_KEYS), hostileString), tie('value')), {
        maxLength: 4,
      })
      .map((entries) => `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${v}`).join(',')}}`),
  ),
}));

/** Bodies that are not JSON at all, or not what the content type says. */
const malformedBody = fc.constantFrom(
  '',
  '{',
  '}',
  '{"a":}',
  '{"a":1,}',
  "{'a':1}",
  'nul',
  'undefined',
  '\u0000',
  '\ufeff{}',
  '[',
  '{"a":1,"a":2}',
  '{"__proto__":{"admin":true},"constructor":{"prototype":{"admin":true}}}',
  'a=1&b=2',
  '<xml/>',
);

const CONTENT_TYPES = [
  'text/plain',
  'application/x-www-form-urlencoded',
  'multipart/form-data; boundary=x',
  'application/json; charset=latin1',
  'application/json; charset=utf-16',
  'application/xml',
  'application/json, text/plain',
  '*/*',
  '',
];

/**
 * Path segments as they go on the wire (already percent-encoded, or deliberately not). Not empty,
 * `.` or `..`: the path would then name another route (URL parsing resolves dot segments before
 * the request leaves), whose answers are not this route's.
 */
const hostileSegment: fc.Arbitrary<string> = fc.oneof(
  { weight: 2, arbitrary: hostileString.filter((s) => s.length > 0 && s.length <= 300).map(wtf8Encode) },
  fc.constantFrom('%ff', '%', '%zz', '%2F', '%5C', '%C0%AF', '%F0%9F%92%A5', '0', '-1', 'x'.repeat(3_000)),
);

/**
 * Percent-encodes every code unit as UTF-8, lone surrogates included (as their three-byte form,
 * which a URL may carry though no UTF-8 decoder accepts it): encodeURIComponent throws on them.
 */
function wtf8Encode(text: string): string {
  let out = '';
  for (let i = 0; i < text.length; i += 1) {
    let cp = text.charCodeAt(i);
    const next = text.charCodeAt(i + 1);
    if (cp >= 0xd800 && cp <= 0xdbff && next >= 0xdc00 && next <= 0xdfff) {
      cp = 0x10000 + ((cp - 0xd800) << 10) + (next - 0xdc00);
      i += 1;
    }
    if (/^[A-Za-z0-9_.~-]$/.test(String.fromCharCode(cp)) && cp < 0x80) {
      out += String.fromCharCode(cp);
      continue;
    }
    const bytes =
      cp < 0x80
        ? [cp]
        : cp < 0x800
          ? [0xc0 | (cp >> 6), 0x80 | (cp & 63)]
          : cp < 0x10000
            ? [0xe0 | (cp >> 12), 0x80 | ((cp >> 6) & 63), 0x80 | (cp & 63)]
            : [0xf0 | (cp >> 18), 0x80 | ((cp >> 12) & 63), 0x80 | ((cp >> 6) & 63), 0x80 | (cp & 63)];
    out += bytes.map((b) => `%${b.toString(16).toUpperCase().padStart(2, '0')}`).join('');
  }
  return out;
}

const QUERY_NAMES = [
  'page_size',
  'current_page',
  'workspace_id',
  'email',
  'role',
  'ids',
  'replace_existing',
  'filter',
  'count',
  'startIndex',
  '__proto__',
  'constructor',
  'a[b][c]',
  'a[__proto__][x]',
  '',
];

/** Short enough that a whole URL stays within the 16 KB Node allows a request head. */
const queryPart = hostileString.filter((s) => s.length <= 60).map(wtf8Encode);

const hostileQuery: fc.Arbitrary<string> = fc.oneof(
  { weight: 2, arbitrary: fc.constant('') },
  fc.constantFrom('?', '?&&&', '?%ff', '?a=%', '?=', `?${'a=1&'.repeat(500)}`),
  fc
    .array(fc.tuple(fc.oneof(fc.constantFrom(...QUERY_NAMES), queryPart), queryPart), {
      minLength: 1,
      maxLength: 4,
    })
    .map((pairs) => `?${pairs.map(([k, v]) => `${k}=${v}`).join('&')}`),
);

// ---------------------------------------------------------------------------------------------
// Well-formed bodies, one hostile field at a time: the way past a route's first validation error.

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/**
 * A body each route accepts, by its path without the version prefix (`/v1`, `/v2`, `/admin/v2`
 * serve the same routes). A route without one is still walked, with wholly hostile bodies.
 */
const WELL_FORMED: Record<string, (f: Fixture) => Json> = {
  'POST /configs': (f) => ({
    name: 'hostile config',
    config: { provider: '@mock' },
    workspace_id: f.workspaceId,
  }),
  'PUT /configs/:slug': () => ({ name: 'hostile config', config: { provider: '@mock' }, status: 'active' }),
  'POST /admin/users': () => ({ email: 'hostile.new@example.com', first_name: 'H', role: 'member' }),
  'PUT /admin/users/:id': () => ({ role: 'member' }),
  'POST /admin/workspaces/:workspaceId/users': (f) => ({ users: [{ id: f.userId, role: 'member' }] }),
  'PUT /admin/workspaces/:workspaceId/users/:userId': () => ({ role: 'member' }),
  'POST /workspaces': () => ({ name: 'hostile workspace', description: 'd' }),
  'PUT /workspaces/:id': () => ({
    name: 'hostile workspace',
    description: null,
    settings: { user_api_key_auto_create: null },
  }),
  'POST /api-keys/:type/:sub': (f) => ({
    name: 'hostile key',
    workspace_id: f.workspaceId,
    scopes: ['completions.write'],
    rotation_policy: { rotation_period_days: 30 },
  }),
  'PUT /api-keys/:id': () => ({ name: 'hostile key', description: null, scopes: ['completions.write'] }),
  'POST /api-keys/:id/rotate': () => ({}),
  'POST /integrations': () => ({
    name: 'Hostile',
    ai_provider_id: 'openai',
    key: 'sk-hostile-0000',
    configurations: { api_version: '2024-10-21' },
    pricing_adjustments: { multiplier: { default: 1 } },
  }),
  'PUT /integrations/:slug': () => ({ name: 'Hostile', description: null }),
  'PUT /integrations/:slug/models': () => ({
    models: [{ slug: 'gpt-4o', custom_headers: { 'x-team': 'hostile' } }],
  }),
  'PUT /integrations/:slug/integration-models': () => ({
    models: [{ slug: 'gpt-4o', custom_headers: { 'x-team': 'hostile' } }],
  }),
  'PUT /integrations/:slug/workspaces': () => ({
    workspaces: [],
    global_workspace_access: { enabled: true },
  }),
  'POST /secret-references': () => ({
    name: 'Hostile secret',
    manager_type: 'aws_sm',
    auth_config: {
      aws_auth_type: 'accessKey',
      aws_access_key_id: 'AKIAHOSTILE000000000',
      aws_secret_access_key: 'hostile-secret-access-key',
      aws_region: 'eu-west-1',
    },
    secret_path: 'hostile/path',
  }),
  'PUT /secret-references/:secretReferenceId': () => ({ name: 'Hostile secret', description: null }),
  'POST /deployments': () => ({ name: 'Hostile deployment', type: 'non_production' }),
  'PUT /deployments/:deploymentId': () => ({ name: 'Hostile deployment', tags: { team: 'a' } }),
  'PUT /admin/organisation/settings': () => ({
    block_inline_config: false,
    user_api_key_auto_create_scopes: ['completions.write'],
    user_api_key_rotation_period: 'weekly',
  }),
  'PUT /admin/organisation/sso/:client_id': () => ({
    issuer: 'https://idp.example.com',
    client_secret: 'hostile-client-secret',
    scopes: ['openid', 'email'],
  }),
  'POST /admin/organisation/email-domains': () => ({ domain: 'hostile.example', allow_subdomains: false }),
  'POST /admin/organisation/scim-token': () => ({ replace_existing: true }),
  'POST /scim/workspaces': (f) => ({
    workspace_id: f.workspaceId,
    role: 'member',
    scim_group_name: 'fixture group',
  }),
  'POST /scim/:organisationId/Users': () => ({
    userName: 'hostile.scim@example.com',
    name: { givenName: 'H' },
    emails: [{ value: 'hostile.scim@example.com', primary: true }],
    active: true,
  }),
  'PUT /scim/:organisationId/Users/:id': () => ({ userName: 'fixture.scim@example.com', active: true }),
  'PATCH /scim/:organisationId/Users/:id': () => ({
    Operations: [{ op: 'replace', path: 'active', value: true }],
  }),
  'POST /scim/:organisationId/Groups': () => ({ displayName: 'hostile group', members: [] }),
  'PUT /scim/:organisationId/Groups/:id': () => ({ displayName: 'fixture group', members: [] }),
  'PATCH /scim/:organisationId/Groups/:id': () => ({
    Operations: [{ op: 'replace', path: 'displayName', value: 'fixture group' }],
  }),
  'POST /chat/completions': () => ({
    model: '@mock/mock-1',
    messages: [{ role: 'user', content: 'hello' }],
    max_tokens: 16,
  }),
  'POST /oauth/register': () => ({ client_name: 'hostile', redirect_uris: ['http://127.0.0.1:1/cb'] }),
  'POST /oauth/postAuthorizeConsent': () => ({ approve: false, client_id: 'nothing' }),
};

const routeKey = (route: Pick<WriteRoute, 'method' | 'path'>) =>
  `${route.method} ${route.path.replace(/^\/(admin\/v2|v1|v2)(?=\/)/, '')}`;

/** Every place in a JSON value a hostile value can go: each field and item, nested ones too. */
function leafPaths(value: Json, path: Array<string | number> = []): Array<Array<string | number>> {
  if (value === null || typeof value !== 'object') return [path];
  const entries: Array<[string | number, Json]> = Array.isArray(value)
    ? value.map((v, i) => [i, v])
    : Object.entries(value);
  return [path, ...entries.flatMap(([k, v]) => leafPaths(v, [...path, k]))];
}

/** JSON text of `value` with the value at `path` replaced by the JSON text `replacement`. */
function renderWith(value: Json, path: Array<string | number>, replacement: string): string {
  if (path.length === 0) return replacement;
  const [head, ...rest] = path;
  if (Array.isArray(value)) {
    return `[${value.map((v, i) => (i === head ? renderWith(v, rest, replacement) : JSON.stringify(v))).join(',')}]`;
  }
  const object = value as Record<string, Json>;
  return `{${Object.entries(object)
    .map(
      ([k, v]) => `${JSON.stringify(k)}:${k === head ? renderWith(v, rest, replacement) : JSON.stringify(v)}`,
    )
    .join(',')}}`;
}

/** A hostile value shaped like `value`: a string for a string, a number for a number, so that type checks pass. */
function hostileLike(value: Json): fc.Arbitrary<string> {
  if (typeof value === 'string') return hostileString.map((s) => JSON.stringify(s));
  if (typeof value === 'number') return hostileNumberText;
  if (typeof value === 'boolean') return fc.constantFrom('0', '1', '"true"', '"False"', 'null');
  return hostileJson;
}

/** The value at `path` in `value`. */
function at(value: Json, path: Array<string | number>): Json {
  return path.reduce<Json>((v, k) => (v as Record<string | number, Json>)[k]!, value);
}

/**
 * The well-formed body with one field made hostile (mostly keeping its type, so that the value
 * gets past type checks to what stores or uses it), one hostile field added, or one left out.
 */
function mutated(example: Json): fc.Arbitrary<string> {
  const paths = leafPaths(example).filter((p) => p.length > 0);
  const fields =
    example !== null && typeof example === 'object' && !Array.isArray(example) ? Object.keys(example) : [];
  const options: Array<fc.WeightedArbitrary<string>> = [
    {
      weight: 1,
      arbitrary: fc
        .tuple(fc.oneof(fc.constantFrom(...HOSTILE_KEYS), hostileString), hostileJson)
        .map(([key, v]) => {
          const text = JSON.stringify(example);
          const extra = `${JSON.stringify(key)}:${v}`;
          return fields.length > 0 ? `${text.slice(0, -1)},${extra}}` : `{${extra}}`;
        }),
    },
  ];
  if (paths.length > 0) {
    const path = fc.constantFrom(...paths);
    options.push(
      {
        weight: 5,
        arbitrary: path.chain((p) => hostileLike(at(example, p)).map((v) => renderWith(example, p, v))),
      },
      { weight: 2, arbitrary: fc.tuple(path, hostileJson).map(([p, v]) => renderWith(example, p, v)) },
    );
  }
  if (fields.length > 0) {
    options.push({
      weight: 1,
      arbitrary: fc.constantFrom(...fields).map((field) => {
        const rest = { ...(example as Record<string, Json>) };
        delete rest[field];
        return JSON.stringify(rest);
      }),
    });
  }
  return fc.oneof(...options);
}

/** One request of the walk: what is substituted into the route and sent. */
interface HostileCase {
  params: string[];
  query: string;
  body: string | undefined;
  contentType: string | undefined;
}

/** The fixture's value for each parameter of `path`, by the segment before it and its name (undefined when it holds none). */
function realValues(path: string): Array<string | undefined> {
  const known: Record<string, string> = {
    'workspaces/:id': fixture.workspaceId,
    'workspaces/:workspaceId': fixture.workspaceId,
    'api-keys/:id': fixture.apiKeyId,
    'api-keys/:type': 'workspace',
    ':type/:sub': 'service',
    'configs/:slug': fixture.configSlug,
    'users/:id': fixture.userId,
    'users/:userId': fixture.userId,
    'integrations/:slug': fixture.integrationSlug,
    'sso/:client_id': fixture.ssoClientId,
    'email-domains/:domain': fixture.emailDomain,
    'scim/:organisationId': fixture.organisationId,
    'Users/:id': fixture.scimUserId,
    'Groups/:id': fixture.scimGroupId,
  };
  const segments = path.split('/');
  return segments.flatMap((segment, i) => {
    if (!segment.startsWith(':')) return [];
    // SCIM's workspace mappings share the name of workspaces.
    if (path.startsWith('/v1/scim/workspaces/')) return [fixture.scimMappingId];
    return [known[`${segments[i - 1]}/${segment}`]];
  });
}

function caseFor(route: WriteRoute): fc.Arbitrary<HostileCase> {
  const params = realValues(route.path).map((real) => {
    // A delete of a real resource would succeed and leave the rest of the walk nothing to name.
    const named =
      real !== undefined && route.method !== 'DELETE' ? [fc.constant(encodeURIComponent(real))] : [];
    return fc.oneof(
      ...named.map((arbitrary) => ({ weight: 3, arbitrary })),
      { weight: 1, arbitrary: fc.constant(NOTHING) },
      { weight: 2, arbitrary: hostileSegment },
    );
  });
  const example = WELL_FORMED[routeKey(route)];
  const bodies: Array<fc.WeightedArbitrary<string | undefined>> = [
    { weight: 1, arbitrary: fc.constant(undefined) },
    { weight: 1, arbitrary: malformedBody },
    { weight: 2, arbitrary: hostileJson },
  ];
  if (example) bodies.push({ weight: 8, arbitrary: mutated(example(fixture)) });
  return fc.record({
    params: fc.tuple(...params),
    query: hostileQuery,
    body: fc.oneof(...bodies),
    contentType: fc.oneof(
      { weight: 6, arbitrary: fc.constant('application/json') },
      { weight: 1, arbitrary: fc.constant(undefined) },
      { weight: 2, arbitrary: fc.constantFrom(...CONTENT_TYPES) },
    ),
  });
}

function fill(path: string, params: string[]): string {
  let i = 0;
  return path.replace(/:\w+/g, () => params[i++]!);
}

// ---------------------------------------------------------------------------------------------
// Credentials, error shapes and what a route's reads show.

/** The SCIM protocol takes the organisation's SCIM token, issued afresh: the walk itself may have revoked the last. */
async function scimToken(): Promise<string> {
  const res = await h.request('POST', '/v1/admin/organisation/scim-token', {
    key: h.adminKey,
    json: { replace_existing: true },
  });
  assert.equal(res.status, 200, res.text);
  return res.body.token as string;
}

const isScim = (path: string) => path.startsWith('/scim/');
const isOAuthProtocol = (route: { path: string; access: Access }) =>
  route.path.startsWith('/oauth/') && route.access === 'public';

/** The credentials a caller allowed on the route sends. */
async function credentialsFor(route: { path: string; access: Access }): Promise<Record<string, string>> {
  if (isScim(route.path)) return { authorization: `Bearer ${await scimToken()}` };
  if (route.access === 'public') return {};
  const key =
    route.access === 'authenticated' || kindCanHold('organisation_admin', route.access)
      ? h.adminKey
      : h.workspaceKey;
  return { authorization: `Bearer ${key}` };
}

const isText = (value: unknown) => typeof value === 'string';
const isTextOrNull = (value: unknown) => value === null || typeof value === 'string';

/**
 * Whether a refusal is in the route's error shape: the one shape, RFC 6749's on OAuth's
 * protocol, SCIM's on SCIM's, and a JSON-RPC error on the MCP gateway's (past authentication,
 * which answers the one shape).
 */
function errorShapeProblem(route: WriteRoute, res: HarnessResponse): string | null {
  const type = res.headers.get('content-type') ?? '';
  if (!/json/.test(type)) return `content-type '${type}' is not JSON`;
  const body = res.body as Record<string, unknown> | string;
  if (typeof body !== 'object' || body === null) return 'the body is not a JSON object';
  if (isOAuthProtocol(route)) {
    return isText(body.error) && (body.error_description === undefined || isText(body.error_description))
      ? null
      : 'not an RFC 6749 error';
  }
  if (route.path.startsWith('/mcp/') && body.jsonrpc === '2.0') {
    const error = body.error as Record<string, unknown> | undefined;
    return error && typeof error === 'object' && Number.isInteger(error.code) && isText(error.message)
      ? null
      : 'not a JSON-RPC error';
  }
  if (isScim(route.path)) {
    const schemas = body.schemas as unknown;
    return Array.isArray(schemas) &&
      schemas.includes('urn:ietf:params:scim:api:messages:2.0:Error') &&
      isText(body.status) &&
      isText(body.detail)
      ? null
      : 'not a SCIM error';
  }
  const error = body.error as Record<string, unknown> | undefined;
  return error &&
    typeof error === 'object' &&
    isText(error.message) &&
    isText(error.type) &&
    isTextOrNull(error.param) &&
    isTextOrNull(error.code)
    ? null
    : 'not the one error shape';
}

/**
 * The reads that show what a write route changes: the route's own path and each path above it
 * that the service serves as a GET, with the fixture's values for their parameters.
 */
function readsOf(route: WriteRoute): string[] {
  const segments = route.path.split('/');
  const reads: string[] = [];
  for (let end = segments.length; end > 1; end -= 1) {
    const candidate = segments.slice(0, end).join('/');
    if (!route.reads.includes(candidate)) continue;
    const values = realValues(candidate);
    if (values.some((v) => v === undefined)) continue;
    reads.push(
      fill(
        candidate,
        values.map((v) => encodeURIComponent(v!)),
      ),
    );
  }
  return reads;
}

/** Fields that change on every use of a key, not by a write. */
function withoutVolatile(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutVolatile);
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(
    Object.entries(value)
      .filter(([k]) => k !== 'last_used_at')
      .map(([k, v]) => [k, withoutVolatile(v)]),
  );
}

/** What the reads show, each as one line; SCIM's reads take its token, the rest the admin key. */
async function snapshot(reads: string[], credentials: Record<string, string>): Promise<string[]> {
  const headers = reads.some(isScim) ? credentials : { authorization: `Bearer ${h.adminKey}` };
  return Promise.all(
    reads.map(async (path) => {
      const res = await h.request('GET', `${path}?page_size=1000`, { headers });
      return `${path} ${res.status} ${JSON.stringify(withoutVolatile(res.body))}`;
    }),
  );
}

// ---------------------------------------------------------------------------------------------

async function createFixture(): Promise<Fixture> {
  const ok = async (method: string, path: string, json: unknown, key = h.adminKey) => {
    const res = await h.request(method, path, { key, json });
    assert.ok(res.status < 300, `${method} ${path}: ${res.status} ${res.text}`);
    return res.body;
  };
  await h.instance<Admin>('admin').ensureMockIntegration(h.organisationId);
  const apiKey = await ok('POST', '/v2/api-keys/workspace/service', {
    name: 'hostile fixture key',
    workspace_id: h.workspaceId,
  });
  const config = await ok('POST', '/v2/configs', {
    name: 'hostile fixture',
    config: { provider: '@mock' },
    workspace_id: h.workspaceId,
  });
  const user = await ok('POST', '/v1/admin/users', { email: 'hostile.fixture@example.com', role: 'member' });
  await ok('POST', `/v1/admin/workspaces/${h.workspaceId}/users`, {
    users: [{ id: user.id, role: 'member' }],
  });
  await ok('POST', '/admin/v2/integrations', {
    name: 'Hostile fixture',
    slug: 'hostile-fixture',
    ai_provider_id: 'openai',
    key: 'sk-hostile-fixture-0000',
  });
  await ok('PUT', '/v1/admin/organisation/sso/hostile-fixture-client', {
    issuer: 'https://idp.example.com',
    client_secret: 'hostile-fixture-secret',
  });
  await ok('POST', '/v1/admin/organisation/email-domains', { domain: 'hostile-fixture.example' });
  const scim = { authorization: `Bearer ${await scimToken()}` };
  const scimCreate = async (path: string, json: unknown) => {
    const res = await h.request('POST', `/scim/${h.organisationId}/${path}`, { headers: scim, json });
    assert.equal(res.status, 201, res.text);
    return res.body.id as string;
  };
  const scimUserId = await scimCreate('Users', { userName: 'fixture.scim@example.com' });
  const scimGroupId = await scimCreate('Groups', { displayName: 'fixture group' });
  const mapping = await ok('POST', '/v1/scim/workspaces', {
    workspace_id: h.workspaceId,
    role: 'member',
    scim_group_id: scimGroupId,
  });
  return {
    workspaceId: h.workspaceId,
    organisationId: h.organisationId,
    apiKeyId: apiKey.id,
    configSlug: config.data.slug,
    userId: user.id,
    integrationSlug: 'hostile-fixture',
    ssoClientId: 'hostile-fixture-client',
    emailDomain: 'hostile-fixture.example',
    scimMappingId: mapping.id,
    scimUserId,
    scimGroupId,
  };
}

before(async () => {
  h = await startServiceHarness({ services: allServices });
  declared = allServices.flatMap((d) => writeRoutesOf(h.instance(d.name).routes ?? []));
  fixture = await createFixture();
});
after(() => h?.close());

test('every write route takes hostile bodies, path parameters and query strings without a 5xx, refusing in its error shape and changing nothing', async (t) => {
  for (const route of declared) {
    await t.test(label(route), async () => {
      const cases = caseFor(route);
      const reads = readsOf(route);
      const credentials = await credentialsFor(route);
      walked.add(label(route));
      // Taken again after each request that succeeded: only a refusal must leave it as it was.
      let shown = await snapshot(reads, credentials);
      await fc.assert(
        fc.asyncProperty(cases, async (c) => {
          const path = `${fill(route.path, c.params)}${c.query}`;
          const res = await h.request(route.method, path, {
            headers: { ...credentials, ...(c.contentType ? { 'content-type': c.contentType } : {}) },
            ...(c.body === undefined ? {} : { body: c.body }),
            signal: AbortSignal.timeout(15_000),
          });
          const call = `${route.method} ${path.slice(0, 300)} (seed ${SEED}) answered ${res.status}`;
          // A route whose feature is not built yet answers 501 saying so, whatever it is sent.
          const notBuilt = res.status === 501 && /not built yet/.test(res.text);
          assert.ok(res.status < 500 || notBuilt, `${call}: ${res.text.slice(0, 500)}`);
          if (res.status >= 400) {
            const problem = errorShapeProblem(route, res);
            assert.equal(problem, null, `${call}: ${problem}: ${res.text.slice(0, 500)}`);
          }
          const now = await snapshot(reads, credentials);
          if (res.status >= 400) assert.deepEqual(now, shown, `${call}, a refusal, yet its reads changed`);
          shown = now;
        }),
        { seed: SEED, numRuns: RUNS_PER_ROUTE, plugins: [fc.interruptAfterTimeLimit(30_000)] },
      );
    });
  }
});

test('the walk covers every write route the services declare', () => {
  const count = allServices
    .flatMap((d) => h.instance(d.name).routes ?? [])
    .reduce(
      (n, route) =>
        n +
        (route.method === 'ALL'
          ? route.examples.filter((e) => WRITE_METHODS.includes(e.method)).length
          : Number(WRITE_METHODS.includes(route.method))),
      0,
    );
  assert.ok(count > 60, `only ${count} write routes`);
  assert.equal(walked.size, count, `walked: ${[...walked].join(', ')}`);
  const keys = new Set(declared.map(routeKey));
  assert.deepEqual(
    Object.keys(WELL_FORMED).filter((key) => !keys.has(key)),
    [],
    'well-formed bodies for routes no service declares',
  );
});
