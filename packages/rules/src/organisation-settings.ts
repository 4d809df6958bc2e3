/**
 * Organisations created at or after this instant (2026-06-19T00:00:00Z, epoch ms) have
 * `block_inline_config` on unless they chose otherwise; older ones have it off.
 */
export const BLOCK_INLINE_CONFIG_DEFAULT_ON_FROM = Date.UTC(2026, 5, 19);

export interface BlockInlineConfigInputs {
  /** The organisation's own choice; null or undefined when it never made one. */
  explicit: boolean | null | undefined;
  /** Epoch ms; null when unknown. */
  organisationCreatedAt: number | null;
  /** The gateway's BLOCK_INLINE_CONFIG switch, which holds for every organisation. */
  forced: boolean;
}

/** Whether requests may select a provider, endpoint or config inline: the one place this is decided. */
export function effectiveBlockInlineConfig({
  explicit,
  organisationCreatedAt,
  forced,
}: BlockInlineConfigInputs): boolean {
  if (forced) return true;
  if (typeof explicit === 'boolean') return explicit;
  return organisationCreatedAt !== null && organisationCreatedAt >= BLOCK_INLINE_CONFIG_DEFAULT_ON_FROM;
}
