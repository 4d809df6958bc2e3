/** The name as lower-case letters and digits joined by single dashes. */
function namePart(name: string): string {
  return name
    .toLowerCase()
    .normalize('NFKD')
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '');
}

/** A URL-safe slug from a display name, with a short random suffix to avoid collisions. */
export function slugFrom(name: string, suffix: string): string {
  return `${namePart(name).slice(0, 40) || 'workspace'}-${suffix}`;
}

/** A saved config's slug, as the reference shows them: `pc-<first letters of the name>-<suffix>`. */
export function configSlugFrom(name: string, suffix: string): string {
  const part = namePart(name).slice(0, 6).replace(/-+$/, '');
  return part ? `pc-${part}-${suffix}` : `pc-${suffix}`;
}

/** A guardrail's slug, with the reference's `guard_` prefix: `guard_<first letters of the name>-<suffix>`. */
export function guardrailSlugFrom(name: string, suffix: string): string {
  const part = namePart(name).slice(0, 6).replace(/-+$/, '');
  return part ? `guard_${part}-${suffix}` : `guard_${suffix}`;
}

/** An integration's or a prompt's slug: up to 40 characters of the name (`fallback` when none), then the suffix. */
export function resourceSlugFrom(name: string, fallback: string, suffix: string): string {
  return `${namePart(name).slice(0, 40).replace(/-+$/, '') || fallback}-${suffix}`;
}
