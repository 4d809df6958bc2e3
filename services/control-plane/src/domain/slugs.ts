/** A URL-safe slug from a display name, with a short random suffix to avoid collisions. */
export function slugFrom(name: string, suffix: string): string {
  const base = name
    .toLowerCase()
    .normalize('NFKD')
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 40);
  return `${base || 'workspace'}-${suffix}`;
}
