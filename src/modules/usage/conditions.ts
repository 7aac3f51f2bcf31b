// Which requests a usage-limits policy applies to (`conditions`) and which bucket a request counts
// against (`group_by`). Pure functions over a flat request context, so the same rules serve the
// control plane (validation at write time) and the data plane (matching per request).

/** What the data plane knows about a request when it checks and records usage. */
export interface UsageRequest {
  workspaceId: string;
  apiKeyId: string;
  virtualKey: string;
  model: string;
  metadata: Record<string, string>;
}

export interface Condition {
  key: string;
  value: string;
}

export interface GroupByKey {
  key: string;
}

/** A rejected input: `param` is the wire path (`conditions[1].key`) for the 400 envelope. */
export interface ValidationIssue {
  param: string;
  message: string;
}

/**
 * The condition (and group_by) keys and the request fact each reads: a new key is one line here,
 * and validation, matching and grouping all follow. `metadata.<name>` keys come on top.
 */
const FIXED_KEY_VALUES = {
  workspace_id: (req: UsageRequest) => req.workspaceId,
  api_key: (req: UsageRequest) => req.apiKeyId,
  virtual_key: (req: UsageRequest) => req.virtualKey,
  model: (req: UsageRequest) => req.model,
} as const;
export const FIXED_KEYS = Object.keys(FIXED_KEY_VALUES) as (keyof typeof FIXED_KEY_VALUES)[];
export const METADATA_PREFIX = 'metadata.';
/** Value meaning "any value, or none at all". */
export const WILDCARD = '*';
// Same bound as run metadata keys: a longer name could never be present on a request.
const MAX_METADATA_NAME = 64;
const ALLOWED_KEYS_TEXT = `${FIXED_KEYS.join(', ')}, ${METADATA_PREFIX}<name>`;
/** The allowed keys in words, for descriptions of the key fields (GraphQL, contracts). */
export const KEYS_DESCRIPTION = `${FIXED_KEYS.map((key) => `\`${key}\``).join(', ')} or \`${METADATA_PREFIX}<name>\`.`;

/** Null when `key` is allowed, else why not. */
function keyProblem(key: string): string | null {
  if ((FIXED_KEYS as readonly string[]).includes(key)) return null;
  if (key.startsWith(METADATA_PREFIX)) {
    const name = key.slice(METADATA_PREFIX.length);
    if (name.length === 0) return `'${key}' needs a metadata name after '${METADATA_PREFIX}'.`;
    if (name.length > MAX_METADATA_NAME) return `Metadata name in '${key}' is longer than ${MAX_METADATA_NAME} characters.`;
    return null;
  }
  return `Unsupported key '${key}'. Allowed keys: ${ALLOWED_KEYS_TEXT}.`;
}

/** A list item's problem: `param` is its wire path, `at` the same path relative to the list. */
export interface ListIssue extends ValidationIssue {
  at: (string | number)[];
}

/**
 * Shared value checks of an already typed list (its contract checks the types): non-empty, each
 * `key` allowed and unique. Duplicate keys are refused in both lists: under all-must-match, two
 * conditions on one key are redundant or can never match (a silently inert policy), and a repeated
 * group_by key only lengthens the value key.
 */
function validateKeyedList<T extends { key: string }>(list: readonly T[], param: string, extra: (item: T, at: string) => string | null): ListIssue[] {
  if (list.length === 0) return [{ param, at: [], message: `${param} must have at least one item.` }];
  const issues: ListIssue[] = [];
  const seen = new Set<string>();
  list.forEach((item, i) => {
    const at = `${param}[${i}]`;
    const problem = keyProblem(item.key);
    if (problem) issues.push({ param: `${at}.key`, at: [i, 'key'], message: problem });
    else if (seen.has(item.key)) issues.push({ param: `${at}.key`, at: [i, 'key'], message: `Duplicate key '${item.key}' in ${param}.` });
    seen.add(item.key);
    const valueProblem = extra(item, at);
    if (valueProblem) issues.push({ param: `${at}.value`, at: [i, 'value'], message: valueProblem });
  });
  return issues;
}

/** All problems in a `conditions` list, in input order; empty when valid. */
export function validateConditions(list: readonly Condition[], param = 'conditions'): ListIssue[] {
  return validateKeyedList(list, param, (item, at) => (item.value.length === 0 ? `${at}.value must be a non-empty string (use '${WILDCARD}' for any value).` : null));
}

/** All problems in a `group_by` list, in input order; empty when valid. */
export function validateGroupBy(list: readonly GroupByKey[], param = 'group_by'): ListIssue[] {
  return validateKeyedList(list, param, () => null);
}

export function requestValue(key: string, req: UsageRequest): string | undefined {
  if (Object.hasOwn(FIXED_KEY_VALUES, key)) return FIXED_KEY_VALUES[key as keyof typeof FIXED_KEY_VALUES](req);
  if (!key.startsWith(METADATA_PREFIX)) return undefined;
  const name = key.slice(METADATA_PREFIX.length);
  return Object.hasOwn(req.metadata, name) ? req.metadata[name] : undefined;
}

/**
 * True when every condition matches (AND). Comparison is exact and case-sensitive. `*` matches
 * any value including an absent one, so `*` always means "no constraint on this key"; any other
 * value never matches an absent key (nor an empty one: condition values are non-empty). Unknown keys never match (validation refuses them earlier;
 * failing closed here keeps a bad stored row from applying a policy to everything).
 */
export function matches(conditions: readonly Condition[], req: UsageRequest): boolean {
  return conditions.every((c) => {
    if (keyProblem(c.key) !== null) return false;
    if (c.value === WILDCARD) return true;
    return requestValue(c.key, req) === c.value;
  });
}

// Percent-escape only the characters that structure a value key ('%' first so escaping is
// reversible): `api_key:a|model:b` can then never be produced by a single crafted value.
// Most parts (ids, slugs) hold none of them: tested once before three replacements.
const STRUCTURE = /[%:|]/;
const escapePart = (s: string): string => (STRUCTURE.test(s) ? s.replace(/%/g, '%25').replace(/:/g, '%3A').replace(/\|/g, '%7C') : s);

/**
 * The bucket's value key: `key:value` pairs in group_by order, joined with `|`, e.g.
 * `api_key:<id>|metadata.user:alice`. A request lacking a grouped value gets `key:` (as does an
 * empty value), so all such requests share one bucket: still limited, not escaping the policy.
 */
export function valueKey(groupBy: readonly GroupByKey[], req: UsageRequest): string {
  return groupBy.map(({ key }) => `${escapePart(key)}:${escapePart(requestValue(key, req) ?? '')}`).join('|');
}

/**
 * Finding matching policies through an index instead of testing each: a policy is indexed under
 * its terms — one (key, value) per condition that constrains (not `*`), or the single term
 * (`*`, `*`) when none does — and a request looks up its own terms: every (key, value) it has, plus
 * (`*`, `*`). A policy matches exactly when all its terms are among the request's (the same rule
 * as `matches`), so the index needs no code per key: a new key of FIXED_KEY_VALUES is found too.
 */
export const MATCH_ALL_TERM: Condition = { key: WILDCARD, value: WILDCARD };

/** The terms a policy is indexed under (distinct). */
export function policyTerms(conditions: readonly Condition[]): Condition[] {
  const terms = new Map<string, Condition>();
  for (const c of conditions) if (c.value !== WILDCARD) terms.set(`${c.key}\u0000${c.value}`, { key: c.key, value: c.value });
  return terms.size ? [...terms.values()] : [MATCH_ALL_TERM];
}

/** The terms a request is looked up by: every key it has a value for, and the match-all term. */
export function requestTerms(req: UsageRequest): Condition[] {
  const terms: Condition[] = [MATCH_ALL_TERM];
  for (const key of FIXED_KEYS) {
    const value = requestValue(key, req);
    if (value) terms.push({ key, value });
  }
  for (const [name, value] of Object.entries(req.metadata)) {
    if (value && name.length <= MAX_METADATA_NAME) terms.push({ key: `${METADATA_PREFIX}${name}`, value });
  }
  return terms;
}
