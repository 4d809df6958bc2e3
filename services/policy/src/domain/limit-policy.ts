import {
  CALLER_KEYS,
  isConditionKey,
  type LimitTarget,
  type LimitType,
  type RequestFacts,
  type Schedule,
} from '@switchyard/rules';

export type { RequestFacts };

/** Rate and usage limit policies as the policy service enforces them, and whom they apply to. */

export type PolicyKind = 'rate_limit' | 'usage_limit';

export interface PolicyCondition {
  key: string;
  value: string;
  /** True: the condition holds for requests that do NOT match. */
  excludes: boolean;
}

export interface LimitPolicy {
  id: string;
  name: string;
  kind: PolicyKind;
  organisationId: string;
  /** Empty for an organisation-wide policy. */
  workspaceId: string;
  conditions: readonly PolicyCondition[];
  /**
   * What each counter counts, in order: api_key, workspace_id, organisation_id, user_id,
   * metadata.<name>, and for target mcp_tools also mcp_server and tool_name.
   */
  groupBy: readonly string[];
  type: LimitType;
  target: LimitTarget;
  /** Per window (rate limits) or per period (usage limits: the credit limit). */
  limit: number;
  /** How its counters run (see `periodAt` in @switchyard/rules). */
  schedule: Schedule;
}

const METADATA = 'metadata.';

/** The request's value for a condition or group_by key; undefined when it has none. */
export function factOf(facts: RequestFacts, key: string): string | undefined {
  switch (key) {
    case 'api_key':
      return facts.apiKeyId || undefined;
    case 'workspace_id':
      return facts.workspaceId || undefined;
    case 'organisation_id':
      return facts.organisationId || undefined;
    case 'user_id':
      return facts.userId || undefined;
    case 'model':
      return facts.model || undefined;
    case 'provider':
      return facts.provider || undefined;
    case 'mcp_server':
      return facts.mcpServer || undefined;
    case 'tool_name':
      return facts.toolName || undefined;
    default:
      return key.startsWith(METADATA) ? facts.metadata[key.slice(METADATA.length)] || undefined : undefined;
  }
}

/** Conditions an API key alone decides: every request of the key has the same value. */
const KEY_FACTS: ReadonlySet<string> = new Set(CALLER_KEYS);

/**
 * Whether the condition holds for a request of `target`. A condition on a key the request's
 * target does not have (a model condition for a tool call) never holds, even an excluding one.
 */
function holds(condition: PolicyCondition, facts: RequestFacts, target: LimitTarget): boolean {
  if (!isConditionKey(target, condition.key)) return false;
  const value = factOf(facts, condition.key);
  const matches = condition.value === '*' ? value !== undefined : value === condition.value;
  return matches !== condition.excludes;
}

/**
 * Whether the policy counts this request: its workspace, and every condition (AND). `target`
 * is the request's: a tool call may count against a model-call cost policy, its conditions
 * read on the tool call's facts.
 */
export function appliesTo(
  policy: LimitPolicy,
  facts: RequestFacts,
  target: LimitTarget = policy.target,
): boolean {
  if (policy.workspaceId && policy.workspaceId !== facts.workspaceId) return false;
  for (const condition of policy.conditions) if (!holds(condition, facts, target)) return false;
  return true;
}

/**
 * Whether the policy could count some request of this API key, whatever its model, provider
 * or metadata: only the conditions the key decides are looked at.
 */
export function couldApplyToKey(policy: LimitPolicy, facts: RequestFacts): boolean {
  if (policy.workspaceId && policy.workspaceId !== facts.workspaceId) return false;
  for (const condition of policy.conditions) {
    if (KEY_FACTS.has(condition.key) && !holds(condition, facts, policy.target)) return false;
  }
  return true;
}

/**
 * The counted entity: each group_by key with the request's value, in the order given, e.g.
 * `api_key:3f…,metadata.team:ml`. A missing value counts under the empty one, so leaving out
 * metadata does not escape a limit.
 */
export function valueKey(policy: LimitPolicy, facts: RequestFacts): string {
  let key = '';
  for (let i = 0; i < policy.groupBy.length; i++) {
    const name = policy.groupBy[i]!;
    key += `${i === 0 ? '' : ','}${name}:${factOf(facts, name) ?? ''}`;
  }
  return key;
}
