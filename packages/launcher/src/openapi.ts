// The ingress's OpenAPI description (docs/openapi.json) from every service's declared routes,
// and the API reference pages made from it (docs/api/<tag>.md); scripts/openapi.ts writes and
// checks both (pnpm run openapi:write / openapi:check).
import {
  openApiDocument,
  serviceForPath,
  type ServiceName,
  type StandaloneOptions,
  type JsonSchema,
  type OpenApiDocument,
  type OpenApiOperation,
  type OpenApiReference,
  type OpenApiResponse,
  type ServiceDefinition,
} from '@switchyard/runtime';
import { allServices } from './services.ts';

export { OpenApiError } from '@switchyard/runtime';

/** Every service's routes as the ingress routes them, described without starting any service. */
export function ingressDocument(definitions: readonly ServiceDefinition[] = allServices): OpenApiDocument {
  return openApiDocument(
    definitions.map((definition) => ({
      service: definition.name,
      routes: definition.describeRoutes?.() ?? [],
    })),
    { ingress: true },
  );
}

/**
 * What a service run as its own process is given besides its definition: the one the routing
 * table sends `/openapi.json` to answers the whole ingress's description there, the others
 * their own.
 */
export function standaloneOptions(service: ServiceName): StandaloneOptions {
  return serviceForPath('/openapi.json') === service ? { ingressDescription: () => ingressDocument() } : {};
}

export const GENERATED_NOTE =
  '<!-- Generated from docs/openapi.json by `pnpm run openapi:write`: edit the routes, not this page. -->';

/** Text in a table cell: no line breaks, no column separators. */
function cell(text: string): string {
  return text.replace(/\s*\n\s*/g, ' ').replace(/\|/g, '\\|');
}

/** Inline code that may hold backticks itself. */
function code(text: string): string {
  const fence = text.includes('`') ? '``' : '`';
  const pad = text.startsWith('`') || text.endsWith('`') ? ' ' : '';
  return `${fence}${pad}${text}${pad}${fence}`;
}

/** A schema in a few words: its type, format, bounds, values and default. */
export function describeSchema(schema: JsonSchema): string {
  if (typeof schema.$ref === 'string') return schema.$ref.replace('#/components/schemas/', '');
  const variants = (schema.oneOf ?? schema.anyOf) as JsonSchema[] | undefined;
  let text: string;
  if (Array.isArray(schema.enum)) {
    text = (schema.enum as unknown[]).map((value) => code(JSON.stringify(value))).join(' or ');
  } else if (variants) {
    text = `one of: ${variants.map(describeVariant).join('; ')}`;
  } else if (schema.type === 'array') {
    text = `array of ${schema.items ? describeSchema(schema.items as JsonSchema) : 'anything'}`;
  } else if (schema.type === undefined) {
    text = 'any';
  } else {
    text = String(schema.type);
    if (schema.type === 'object' && !schema.properties && typeof schema.additionalProperties === 'object') {
      const values = schema.additionalProperties as JsonSchema;
      text += Object.keys(values).length > 0 ? ` (map of ${describeSchema(values)})` : ' (map)';
    }
  }
  const notes: string[] = [];
  if (typeof schema.format === 'string') notes.push(schema.format);
  else if (typeof schema.pattern === 'string') notes.push(`pattern ${code(schema.pattern)}`);
  const range = (min: unknown, max: unknown, unit: string) => {
    if (min === undefined && max === undefined) return;
    if (min !== undefined && max !== undefined) notes.push(`${String(min)} to ${String(max)}${unit}`);
    else if (min !== undefined) notes.push(`at least ${String(min)}${unit}`);
    else notes.push(`at most ${String(max)}${unit}`);
  };
  range(schema.minLength, schema.maxLength, ' characters');
  // zod's integers are JavaScript's safe integers: bounds no one needs to read.
  const bound = (value: unknown) =>
    value === Number.MAX_SAFE_INTEGER || value === Number.MIN_SAFE_INTEGER ? undefined : value;
  range(bound(schema.minimum), bound(schema.maximum), '');
  range(schema.minItems, schema.maxItems, ' items');
  if (schema.nullable === true) notes.push('nullable');
  if (schema.default !== undefined) notes.push(`default ${code(JSON.stringify(schema.default))}`);
  return notes.length > 0 ? `${text} (${notes.join(', ')})` : text;
}

/** A union's branch: an object is named by the property that tells the branches apart (`role: "user"`). */
function describeVariant(schema: JsonSchema): string {
  const properties = schema.properties as Record<string, JsonSchema> | undefined;
  const tag = Object.entries(properties ?? {}).find(
    ([, property]) => Array.isArray(property.enum) && property.enum.length === 1,
  );
  if (schema.type !== 'object' || !tag) return describeSchema(schema);
  return `object with ${tag[0]} ${code(JSON.stringify((tag[1].enum as unknown[])[0]))}`;
}

interface FieldRow {
  name: string;
  schema: JsonSchema;
  required: boolean;
}

/** An object's fields, and the fields of the objects in them, as `a.b` and `list[].c`. */
function fieldsOf(schema: JsonSchema, prefix = '', depth = 0): FieldRow[] {
  const properties = schema.properties as Record<string, JsonSchema> | undefined;
  if (!properties || depth > 4) return [];
  const required = new Set((schema.required as string[] | undefined) ?? []);
  return Object.entries(properties).flatMap(([name, property]) => {
    const path = `${prefix}${name}`;
    const row = { name: path, schema: property, required: required.has(name) };
    const items = property.type === 'array' ? (property.items as JsonSchema | undefined) : undefined;
    const nested = items
      ? fieldsOf(items, `${path}[].`, depth + 1)
      : fieldsOf(property, `${path}.`, depth + 1);
    return [row, ...nested];
  });
}

function authenticationOf(operation: OpenApiOperation): string {
  const names = operation.security.map((requirement) => Object.keys(requirement)[0] ?? 'none');
  if (names.length === 0) return 'none';
  const words: Record<string, string> = {
    apiKey: 'API key (`Authorization: Bearer`)',
    vendorApiKey: 'API key (`x-vendor-api-key`)',
    session: 'session cookie',
    jwt: 'JWT',
    oauth: 'OAuth access token',
    scimToken: "the organisation's SCIM token",
    oauthClient: 'OAuth client credentials (Basic)',
    none: 'or none',
  };
  return names.map((name) => words[name] ?? name).join(', ');
}

function responseLine(document: OpenApiDocument, responses: OpenApiOperation['responses']): string[] {
  return Object.entries(responses).map(([status, response]) => {
    const ref = (response as OpenApiReference).$ref;
    const resolved: OpenApiResponse | undefined = ref
      ? document.components.responses[ref.replace('#/components/responses/', '')]
      : (response as OpenApiResponse);
    const types = Object.keys(resolved?.content ?? {});
    return `- ${status}: ${resolved?.description ?? ''}${types.length > 0 ? ` (${types.map(code).join(', ')})` : ''}`;
  });
}

function operationSection(
  document: OpenApiDocument,
  method: string,
  path: string,
  op: OpenApiOperation,
): string {
  const lines = [`## ${method.toUpperCase()} ${path}`, ''];
  if (op.summary) lines.push(op.summary, '');
  if (op.description) lines.push(op.description, '');
  lines.push(
    `- Scope: ${code(op['x-required-scope'])}`,
    `- Authentication: ${authenticationOf(op)}`,
    `- Operation id: ${code(op.operationId)}`,
  );
  if (op['x-forwarded-to-provider']) {
    lines.push(
      `- Forwarded to the provider (any path matching ${code(op['x-forwarded-to-provider'].pattern)})`,
    );
  }
  lines.push('');
  if (op.parameters && op.parameters.length > 0) {
    lines.push(
      '### Parameters',
      '',
      '| Name | In | Type | Required | Description |',
      '|---|---|---|---|---|',
    );
    for (const p of op.parameters) {
      lines.push(
        `| ${code(p.name)} | ${p.in} | ${cell(describeSchema(p.schema))} | ${p.required ? 'yes' : 'no'} | ${cell(p.description ?? '')} |`,
      );
    }
    lines.push('');
  }
  if (op.requestBody) {
    const types = Object.keys(op.requestBody.content);
    lines.push(`### Body (${types.map(code).join(', ')}${op.requestBody.required ? '' : '; optional'})`, '');
    if (op.requestBody.description) lines.push(op.requestBody.description, '');
    const schema = op.requestBody.content[types[0]!]?.schema ?? {};
    const fields = fieldsOf(schema);
    if (fields.length > 0) {
      lines.push('| Field | Type | Required | Description |', '|---|---|---|---|');
      for (const field of fields) {
        const description = typeof field.schema.description === 'string' ? field.schema.description : '';
        lines.push(
          `| ${code(field.name)} | ${cell(describeSchema(field.schema))} | ${field.required ? 'yes' : 'no'} | ${cell(description)} |`,
        );
      }
      lines.push('');
    } else if (Object.keys(schema).length > 0) {
      lines.push(`Type: ${describeSchema(schema)}`, '');
    }
  }
  lines.push('### Responses', '', ...responseLine(document, op.responses), '');
  return lines.join('\n');
}

/**
 * One markdown page per tag (service): each operation's method, path, scope, summary,
 * parameters and body fields, as the document describes them. Keyed by file name.
 */
export function referencePages(document: OpenApiDocument): Map<string, string> {
  const pages = new Map<string, string>();
  for (const tag of document.tags) {
    const operations = Object.entries(document.paths).flatMap(([path, item]) =>
      Object.entries(item)
        .filter(([, op]) => op.tags.includes(tag.name))
        .map(([method, op]) => ({ method, path, op })),
    );
    const lines = [`# ${tag.name} API reference`, '', GENERATED_NOTE, '', tag.description, ''];
    if (operations.length === 0) {
      lines.push('It serves no HTTP route.', '');
    } else {
      lines.push('| Method | Path | Scope | Summary |', '|---|---|---|---|');
      for (const { method, path, op } of operations) {
        lines.push(
          `| ${method.toUpperCase()} | ${code(path)} | ${code(op['x-required-scope'])} | ${cell(op.summary ?? '')} |`,
        );
      }
      lines.push('');
      for (const { method, path, op } of operations) lines.push(operationSection(document, method, path, op));
    }
    pages.set(`${tag.name}.md`, `${lines.join('\n').trimEnd()}\n`);
  }
  return pages;
}
