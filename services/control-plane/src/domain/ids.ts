const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Only a UUID-shaped value may be compared with a uuid column: anything else fails the cast in Postgres. */
export function isUuid(value: string): boolean {
  return UUID.test(value);
}
