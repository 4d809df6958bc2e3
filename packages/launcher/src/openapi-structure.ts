// What an OpenAPI 3.0 document must hold, checked by hand (tests use it; no network, no
// validator package): the required fields of each object, path templates and their parameters,
// response codes, security requirements against the declared schemes, every $ref resolving, and
// schemas in 3.0's dialect (no JSON Schema keywords 3.0 does not know).

type Json = Record<string, unknown>;

const isObject = (value: unknown): value is Json =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

const ROOT_FIELDS = new Set([
  'openapi',
  'info',
  'servers',
  'paths',
  'components',
  'security',
  'tags',
  'externalDocs',
]);
const PATH_ITEM_FIELDS = new Set(['$ref', 'summary', 'description', 'servers', 'parameters']);
const METHODS = new Set(['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace']);
const OPERATION_FIELDS = new Set([
  'tags',
  'summary',
  'description',
  'externalDocs',
  'operationId',
  'parameters',
  'requestBody',
  'responses',
  'callbacks',
  'deprecated',
  'security',
  'servers',
]);
const PARAMETER_LOCATIONS = new Set(['query', 'header', 'path', 'cookie']);
const SCHEMA_TYPES = new Set(['string', 'number', 'integer', 'boolean', 'array', 'object']);
/** JSON Schema keywords an OpenAPI 3.0 Schema Object does not have. */
const NOT_IN_3_0 = [
  '$schema',
  '$defs',
  '$id',
  'const',
  'prefixItems',
  'examples',
  'propertyNames',
  'contains',
  'if',
  'then',
  'else',
  'dependentRequired',
  'unevaluatedProperties',
];
/** Where a map's keys are names (properties, content types), not keywords. */
const NAMED = new Set([
  'properties',
  'paths',
  'schemas',
  'responses',
  'content',
  'securitySchemes',
  'scopes',
]);
/** A schema's keywords whose values are data, not schemas. */
const DATA = new Set(['default', 'enum', 'example', 'required']);

const extension = (key: string) => key.startsWith('x-');

/** Every problem found, each naming where it is; empty when the document is well formed. */
export function structuralProblems(document: unknown): string[] {
  const problems: string[] = [];
  const at = (where: string, problem: string) => problems.push(`${where}: ${problem}`);
  if (!isObject(document)) return ['the document is not an object'];

  for (const key of Object.keys(document)) {
    if (!ROOT_FIELDS.has(key) && !extension(key)) at('root', `unknown field ${key}`);
  }
  if (typeof document.openapi !== 'string' || !/^3\.0\.\d+$/.test(document.openapi)) {
    at('openapi', `must be a 3.0.x version, not ${JSON.stringify(document.openapi)}`);
  }
  const info = document.info;
  if (!isObject(info)) at('info', 'required');
  else {
    if (typeof info.title !== 'string' || info.title === '') at('info.title', 'required');
    if (typeof info.version !== 'string' || info.version === '') at('info.version', 'required');
  }
  const components = isObject(document.components) ? document.components : {};
  const schemes = isObject(components.securitySchemes) ? components.securitySchemes : {};
  for (const [name, scheme] of Object.entries(schemes)) {
    const where = `components.securitySchemes.${name}`;
    if (!isObject(scheme)) {
      at(where, 'not an object');
      continue;
    }
    if (scheme.type === 'apiKey') {
      if (typeof scheme.name !== 'string') at(where, 'an apiKey scheme needs its name');
      if (!['query', 'header', 'cookie'].includes(String(scheme.in))) at(where, 'an apiKey scheme needs in');
    } else if (scheme.type === 'http') {
      if (typeof scheme.scheme !== 'string') at(where, 'an http scheme needs its scheme');
    } else if (scheme.type === 'oauth2') {
      if (!isObject(scheme.flows) || Object.keys(scheme.flows).length === 0) at(where, 'oauth2 needs flows');
      for (const [flowName, flow] of Object.entries(isObject(scheme.flows) ? scheme.flows : {})) {
        if (!isObject(flow) || !isObject(flow.scopes)) at(`${where}.${flowName}`, 'needs scopes');
        const urls = {
          implicit: ['authorizationUrl'],
          password: ['tokenUrl'],
          clientCredentials: ['tokenUrl'],
        };
        const needed = urls[flowName as keyof typeof urls] ?? ['authorizationUrl', 'tokenUrl'];
        for (const url of needed)
          if (isObject(flow) && typeof flow[url] !== 'string') at(`${where}.${flowName}`, `needs ${url}`);
      }
    } else if (scheme.type !== 'openIdConnect') at(where, `unknown type ${String(scheme.type)}`);
  }
  const tags = new Set(
    (Array.isArray(document.tags) ? document.tags : []).map((tag: unknown) =>
      isObject(tag) ? tag.name : undefined,
    ),
  );

  const operationIds = new Map<string, string>();
  if (!isObject(document.paths)) at('paths', 'required');
  for (const [path, item] of Object.entries(isObject(document.paths) ? document.paths : {})) {
    if (extension(path)) continue;
    if (!path.startsWith('/')) at(path, 'a path starts with /');
    if (!isObject(item)) {
      at(path, 'not a path item');
      continue;
    }
    const templated = [...path.matchAll(/\{([^}]+)\}/g)].map((match) => match[1]!);
    if (new Set(templated).size !== templated.length) at(path, 'a template parameter twice');
    for (const [method, operation] of Object.entries(item)) {
      if (PATH_ITEM_FIELDS.has(method) || extension(method)) continue;
      const where = `${method.toUpperCase()} ${path}`;
      if (!METHODS.has(method)) {
        at(path, `unknown field ${method}`);
        continue;
      }
      if (!isObject(operation)) {
        at(where, 'not an operation');
        continue;
      }
      for (const key of Object.keys(operation)) {
        if (!OPERATION_FIELDS.has(key) && !extension(key)) at(where, `unknown field ${key}`);
      }
      if (typeof operation.operationId === 'string') {
        const other = operationIds.get(operation.operationId);
        if (other) at(where, `operationId ${operation.operationId} is also ${other}'s`);
        operationIds.set(operation.operationId, where);
      }
      for (const tag of Array.isArray(operation.tags) ? operation.tags : []) {
        if (!tags.has(tag)) at(where, `tag ${String(tag)} is not declared`);
      }
      const parameters = Array.isArray(operation.parameters) ? operation.parameters : [];
      const seen = new Set<string>();
      for (const parameter of parameters) {
        if (!isObject(parameter)) {
          at(where, 'a parameter is not an object');
          continue;
        }
        const name = String(parameter.name);
        if (typeof parameter.name !== 'string') at(where, 'a parameter without a name');
        if (!PARAMETER_LOCATIONS.has(String(parameter.in))) at(where, `parameter ${name}: unknown in`);
        if (seen.has(`${String(parameter.in)} ${name}`)) at(where, `parameter ${name} twice`);
        seen.add(`${String(parameter.in)} ${name}`);
        if (!isObject(parameter.schema) && !isObject(parameter.content))
          at(where, `parameter ${name}: no schema`);
        if (parameter.in === 'path') {
          if (parameter.required !== true) at(where, `path parameter ${name} must be required`);
          if (!templated.includes(name)) at(where, `path parameter ${name} is not in the path`);
        }
      }
      for (const name of templated) {
        if (!parameters.some((p: unknown) => isObject(p) && p.in === 'path' && p.name === name)) {
          at(where, `{${name}} has no path parameter`);
        }
      }
      if (operation.requestBody !== undefined) {
        const body = operation.requestBody;
        if (!isObject(body) || (!isObject(body.content) && typeof body.$ref !== 'string')) {
          at(where, 'a request body needs its content');
        } else if (isObject(body.content) && Object.keys(body.content).length === 0) {
          at(where, 'a request body needs at least one media type');
        }
        if (method === 'get') at(where, 'a GET has no request body');
      }
      const responses = operation.responses;
      if (!isObject(responses) || Object.keys(responses).length === 0) at(where, 'responses are required');
      for (const [status, response] of Object.entries(isObject(responses) ? responses : {})) {
        if (status !== 'default' && !/^[1-5](\d\d|XX)$/.test(status) && !extension(status)) {
          at(where, `response ${status}: not a status code`);
        }
        if (
          !isObject(response) ||
          (typeof response.$ref !== 'string' && typeof response.description !== 'string')
        ) {
          at(where, `response ${status}: needs a description`);
        }
      }
      for (const requirement of Array.isArray(operation.security) ? operation.security : []) {
        if (!isObject(requirement)) {
          at(where, 'a security requirement is not an object');
          continue;
        }
        for (const [name, scopes] of Object.entries(requirement)) {
          const scheme = schemes[name];
          if (!isObject(scheme)) at(where, `security scheme ${name} is not declared`);
          else if (!Array.isArray(scopes)) at(where, `security ${name}: scopes must be a list`);
          else if (scheme.type !== 'oauth2' && scheme.type !== 'openIdConnect' && scopes.length > 0) {
            at(where, `security ${name}: only OAuth 2 requirements list scopes`);
          }
        }
      }
    }
  }

  // Every $ref resolves within the document; every schema speaks 3.0.
  const resolve = (ref: string) =>
    ref.startsWith('#/')
      ? ref
          .slice(2)
          .split('/')
          .map((part) => part.replace(/~1/g, '/').replace(/~0/g, '~'))
          .reduce<unknown>((node, part) => (isObject(node) ? node[part] : undefined), document)
      : undefined;
  const walk = (node: unknown, where: string, kind: 'schema' | 'other'): void => {
    if (Array.isArray(node)) {
      node.forEach((child, i) => walk(child, `${where}[${i}]`, kind));
      return;
    }
    if (!isObject(node)) return;
    if (typeof node.$ref === 'string' && resolve(node.$ref) === undefined) {
      at(where, `$ref ${node.$ref} resolves to nothing`);
    }
    if (kind === 'schema') {
      for (const keyword of NOT_IN_3_0) if (keyword in node) at(where, `${keyword} is not OpenAPI 3.0`);
      if ('type' in node && !SCHEMA_TYPES.has(node.type as string))
        at(where, `type ${JSON.stringify(node.type)}`);
      if (node.type === 'array' && !('items' in node)) at(where, 'an array schema needs items');
    }
    for (const [key, child] of Object.entries(node)) {
      if (extension(key) || (kind === 'schema' && DATA.has(key))) continue;
      if (NAMED.has(key) && isObject(child)) {
        const values = key === 'properties' || key === 'schemas' ? 'schema' : 'other';
        for (const [name, value] of Object.entries(child)) walk(value, `${where}.${key}.${name}`, values);
      } else {
        walk(child, `${where}.${key}`, kind === 'schema' || key === 'schema' ? 'schema' : 'other');
      }
    }
  };
  walk(document, '#', 'other');
  return problems;
}
