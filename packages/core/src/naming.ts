/**
 * The naming transform between the wire (snake_case fields, as the API and its zod schemas
 * spell them) and domain inputs (camelCase). A domain input type is derived from its schema,
 * `CamelKeys<z.output<typeof schema>>`, so the fields are written once; the HTTP layer applies
 * `camelKeys` to the parsed body. Only the top level is renamed: nested values (metadata maps,
 * policies) keep their keys as sent.
 */
export type CamelCase<S extends string> = S extends `${infer Head}_${infer Tail}`
  ? `${Head}${Capitalize<CamelCase<Tail>>}`
  : S;

export type CamelKeys<T> = { [K in keyof T as K extends string ? CamelCase<K> : K]: T[K] };

export function camelCase<S extends string>(name: S): CamelCase<S> {
  return name.replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase()) as CamelCase<S>;
}

export function camelKeys<T extends object>(value: T): CamelKeys<T> {
  const out: Record<string, unknown> = {};
  for (const [key, field] of Object.entries(value)) out[camelCase(key)] = field;
  return out as CamelKeys<T>;
}
