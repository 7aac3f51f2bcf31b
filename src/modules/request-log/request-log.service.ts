/**
 * Reading the request log: records newest first with filters and a cursor, and usage summed by
 * any of day, hour, workspace, API key, virtual key and model. Tenancy as everywhere: an
 * organisation key reads its organisation (one workspace with `workspace_id`), a workspace key
 * only its workspace. Reads first write what is still queued, so a caller sees its own calls.
 */
import type { ServiceContext } from '../../context.js';
import { resolveWorkspace } from '../../auth/tenancy.js';
import { dialectOf, executeSql } from '../../db/sql.js';
import { cursorLimit } from '../../lib/paging.js';
import { BadRequestError, NotFoundError } from '../../errors.js';
import { RequestLogSchema, type RequestLog } from './request-log.entity.js';
import { requestLogWriter } from './request-log.writer.js';

export interface RequestLogFilter {
  workspaceId?: string | null;
  apiKeyId?: string | null;
  virtualKey?: string | null;
  model?: string | null;
  status?: number | null;
  /** ISO 8601 or Unix seconds; inclusive. */
  from?: string | null;
  /** ISO 8601 or Unix seconds; exclusive. */
  to?: string | null;
}

export const SUMMARY_GROUPS = ['day', 'hour', 'workspace', 'api_key', 'virtual_key', 'model'] as const;
export type SummaryGroup = (typeof SUMMARY_GROUPS)[number];

export interface UsageSummaryRow {
  day: string | null;
  hour: string | null;
  workspaceId: string | null;
  apiKeyId: string | null;
  virtualKey: string | null;
  model: string | null;
  requests: number;
  errors: number;
  promptTokens: number;
  completionTokens: number;
  totalTokens: number;
  cost: number;
}

function time(value: string | null | undefined, param: string): number | null {
  if (value === null || value === undefined || value === '') return null;
  const ms = /^\d+$/.test(value) ? Number(value) * 1000 : Date.parse(value);
  if (!Number.isFinite(ms)) throw new BadRequestError(`Invalid '${param}': expected an ISO 8601 time or Unix seconds.`, { param, code: 'invalid_value' });
  return ms;
}

/** The WHERE clause of a filter in SQL (shared by the list and the summary), tenancy included. */
async function whereOf(ctx: ServiceContext, filter: RequestLogFilter): Promise<{ sql: string; params: unknown[] }> {
  const clauses = ['organisation_id = ?'];
  const params: unknown[] = [ctx.principal.organisationId];
  if (filter.workspaceId || ctx.principal.workspaceId) {
    const workspace = await resolveWorkspace(ctx.em, ctx.principal, filter.workspaceId ?? null);
    clauses.push('workspace_id = ?');
    params.push(workspace.id);
  }
  const equal: Array<[string, unknown]> = [
    ['api_key_id', filter.apiKeyId],
    ['virtual_key', filter.virtualKey],
    ['model', filter.model],
    ['status', filter.status],
  ];
  for (const [column, value] of equal) {
    if (value === null || value === undefined || value === '') continue;
    clauses.push(`${column} = ?`);
    params.push(value);
  }
  const from = time(filter.from, 'from');
  const to = time(filter.to, 'to');
  // Dates, not milliseconds: each driver sends a Date as its column holds it.
  if (from !== null) {
    clauses.push('created_at >= ?');
    params.push(new Date(from));
  }
  if (to !== null) {
    clauses.push('created_at < ?');
    params.push(new Date(to));
  }
  return { sql: clauses.join(' and '), params };
}

export interface RequestLogPage {
  data: RequestLog[];
  firstId: string | null;
  lastId: string | null;
  hasMore: boolean;
}

/** Newest first; `after` is the id of the last record of the previous page. */
export async function listRequestLogs(ctx: ServiceContext, filter: RequestLogFilter, page: { limit?: number | null; after?: string | null }): Promise<RequestLogPage> {
  const limit = cursorLimit(page.limit);
  await requestLogWriter(ctx.runtime).flush();
  const where = await whereOf(ctx, filter);
  let sql = where.sql;
  const params = [...where.params];
  if (page.after) {
    const cursor = await ctx.em.findOne(RequestLogSchema, { id: page.after, organisationId: ctx.principal.organisationId }, { fields: ['createdAt'] });
    if (!cursor) throw new NotFoundError(`No request log record '${page.after}'.`, { param: 'after', code: 'invalid_cursor' });
    sql += ' and (created_at < ? or (created_at = ? and id < ?))';
    params.push(cursor.createdAt, cursor.createdAt, page.after);
  }
  const rows = await executeSql<Array<{ id: string }>>(ctx.em, `select id from request_logs where ${sql} order by created_at desc, id desc limit ?`, [...params, limit + 1]);
  const ids = rows.slice(0, limit).map((r) => r.id);
  const records = ids.length ? await ctx.em.find(RequestLogSchema, { id: { $in: ids } }) : [];
  const byId = new Map(records.map((r) => [r.id, r]));
  const data = ids.map((id) => byId.get(id)!);
  return { data, firstId: ids[0] ?? null, lastId: ids.at(-1) ?? null, hasMore: rows.length > limit };
}

// created_at is milliseconds since the epoch on SQLite, a timestamptz on PostgreSQL.
const UTC_DAY = { sqlite: "strftime('%Y-%m-%d', created_at / 1000, 'unixepoch')", postgresql: "to_char(created_at at time zone 'UTC', 'YYYY-MM-DD')" };
const UTC_HOUR = {
  sqlite: "strftime('%Y-%m-%dT%H:00:00Z', created_at / 1000, 'unixepoch')",
  postgresql: `to_char(created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24":00:00Z"')`,
};

const GROUP_COLUMNS: Record<SummaryGroup, { expression: string | Record<'sqlite' | 'postgresql', string>; key: keyof UsageSummaryRow }> = {
  day: { expression: UTC_DAY, key: 'day' },
  hour: { expression: UTC_HOUR, key: 'hour' },
  workspace: { expression: 'workspace_id', key: 'workspaceId' },
  api_key: { expression: 'api_key_id', key: 'apiKeyId' },
  virtual_key: { expression: 'virtual_key', key: 'virtualKey' },
  model: { expression: 'model', key: 'model' },
};

/** Requests, errors (status ≥ 400), tokens and cost, summed per group (in group order). */
export async function usageSummary(ctx: ServiceContext, groupBy: readonly SummaryGroup[], filter: RequestLogFilter): Promise<UsageSummaryRow[]> {
  const groups = [...new Set(groupBy)];
  for (const g of groups) {
    if (!(SUMMARY_GROUPS as readonly string[]).includes(g)) {
      throw new BadRequestError(`Invalid 'group_by': '${g}' is not one of ${SUMMARY_GROUPS.join(', ')}.`, { param: 'group_by', code: 'invalid_value' });
    }
  }
  await requestLogWriter(ctx.runtime).flush();
  const where = await whereOf(ctx, filter);
  const dialect = dialectOf(ctx.em);
  const selected = groups.map((g, i) => {
    const { expression } = GROUP_COLUMNS[g];
    return `${typeof expression === 'string' ? expression : expression[dialect]} as g${i}`;
  });
  const sql = [
    `select ${[...selected, 'count(*) as requests', 'sum(case when status >= 400 then 1 else 0 end) as errors', 'sum(prompt_tokens) as prompt', 'sum(completion_tokens) as completion', 'sum(total_tokens) as total', 'sum(cost) as cost'].join(', ')}`,
    `from request_logs where ${where.sql}`,
    groups.length ? `group by ${groups.map((_, i) => `g${i}`).join(', ')} order by ${groups.map((_, i) => `g${i}`).join(', ')}` : '',
  ].join(' ');
  const rows = await executeSql<Array<Record<string, unknown>>>(ctx.em, sql, where.params);
  return rows
    .filter((row) => Number(row.requests) > 0)
    .map((row) => {
      const out: UsageSummaryRow = {
        day: null,
        hour: null,
        workspaceId: null,
        apiKeyId: null,
        virtualKey: null,
        model: null,
        requests: Number(row.requests),
        errors: Number(row.errors ?? 0),
        promptTokens: Number(row.prompt ?? 0),
        completionTokens: Number(row.completion ?? 0),
        totalTokens: Number(row.total ?? 0),
        cost: Number(row.cost ?? 0),
      };
      groups.forEach((g, i) => {
        (out as unknown as Record<string, unknown>)[GROUP_COLUMNS[g].key] = row[`g${i}`] ?? null;
      });
      return out;
    });
}
