import { SUMMARY_GROUPS, usageSummary, type SummaryGroup } from '../modules/request-log/request-log.service.js';
import type { Command } from './args.js';
import { UsageError } from './args.js';
import { round, table } from './format.js';
import { workspaceSlugs } from './lists.js';

const UNITS: Record<string, number> = { h: 3_600_000, d: 86_400_000, w: 604_800_000 };

/**
 * `--since`/`--until`: `<n>h`, `<n>d` or `<n>w` ago, or what the request log's own filter reads
 * (ISO 8601 or Unix seconds), which the service checks.
 */
function when(value: string | undefined, now: Date): string | undefined {
  const relative = value === undefined ? null : /^(\d{1,6})([hdw])$/.exec(value);
  return relative ? new Date(now.getTime() - Number(relative[1]) * UNITS[relative[2]]).toISOString() : value;
}

/** Requests, tokens and cost from the request log, summed per group. */
export const usageCommands: Command[] = [
  {
    name: 'usage',
    summary: 'Sum requests, errors, tokens and cost from the request log, per day (or other groups).',
    options: {
      workspace: { type: 'string', value: 'ID_OR_SLUG', description: 'only this workspace (default: every workspace)' },
      since: { type: 'string', value: 'WHEN', description: 'from (inclusive): 24h, 7d, 2w ago, ISO 8601 or Unix seconds (default: 30d)' },
      until: { type: 'string', value: 'WHEN', description: 'to (exclusive), same forms (default: now)' },
      'group-by': { type: 'string', value: 'GROUPS', description: `comma-separated: ${SUMMARY_GROUPS.join(', ')} (default: day)` },
    },
    async run(ctx, values) {
      const groups = String(values['group-by'] ?? 'day')
        .split(',')
        .map((g) => g.trim())
        .filter(Boolean);
      const unknown = groups.find((g) => !(SUMMARY_GROUPS as readonly string[]).includes(g));
      if (unknown !== undefined || !groups.length) throw new UsageError(`Invalid value for --group-by: '${unknown ?? ''}' (expected ${SUMMARY_GROUPS.join(', ')}). Run 'gatehouse usage --help'.`);
      const now = ctx.runtime.clock.now();
      const filter = { workspaceId: values.workspace as string | undefined, from: when((values.since as string | undefined) ?? '30d', now), to: when(values.until as string | undefined, now) };
      const rows = await usageSummary(ctx, groups as SummaryGroup[], filter);
      const slugs = await workspaceSlugs(ctx);
      const keyOf = { day: 'day', hour: 'hour', workspace: 'workspaceId', api_key: 'apiKeyId', virtual_key: 'virtualKey', model: 'model' } as const;
      const json = rows.map((r) => ({
        ...Object.fromEntries(groups.map((g) => [g, r[keyOf[g as SummaryGroup]]])),
        requests: r.requests,
        errors: r.errors,
        prompt_tokens: r.promptTokens,
        completion_tokens: r.completionTokens,
        total_tokens: r.totalTokens,
        cost: r.cost,
      }));
      const label = (g: string, value: unknown) => (g === 'workspace' ? (slugs.get(String(value)) ?? String(value)) : String(value ?? '-'));
      const text = table(
        [...groups.map((g) => g.toUpperCase()), 'REQUESTS', 'ERRORS', 'PROMPT', 'COMPLETION', 'TOTAL', 'COST $'],
        json.map((r) => [...groups.map((g) => label(g, (r as Record<string, unknown>)[g])), r.requests, r.errors, r.prompt_tokens, r.completion_tokens, r.total_tokens, round(r.cost)]),
      );
      return { json, text };
    },
  },
];
