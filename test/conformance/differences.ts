/**
 * Where Gatehouse's answers may differ from the published documents, in two lists:
 *
 * - `documented`: deliberate differences. Each names the phrase of README's section "Where Gatehouse
 *   answers differently from the published documents" that says why (a test holds the phrase there).
 * - `pending`: mismatches known today whose fix belongs to work under way elsewhere. The conformance
 *   test fails when one of them no longer happens, so that it is taken off this list at once.
 */
import type { Problem } from './check.js';

export interface Difference {
  /** `METHOD /template` of the document operation. */
  route: string;
  /** Matches the JSON pointer of the problem inside the body or event. */
  path: RegExp;
  /** Matches the problem's message (`extra key 'x'`, `must be string`…). */
  message: RegExp;
}

export interface DocumentedDifference extends Difference {
  /** A phrase of README's "Where Gatehouse answers differently" section that explains it. */
  readme: string;
}

export interface PendingMismatch extends Difference {
  /** A short name of what is wrong and what the document wants. */
  name: string;
}

/** Statuses Gatehouse answers in place of a documented one, checked against that one's schema. */
export const statusStandIns: { status: number; as: number; readme: string }[] = [
  { status: 246, as: 200, readme: '**246** replaces 200' },
];

const extraKeys = (route: string, at: RegExp, keys: string[]): Difference => ({ route, path: at, message: new RegExp(`^extra key '(${keys.join('|')})'$`) });

/** Streams a document does not describe: their events are checked against another document's schema. */
export const streamStandIns: { route: string; schema: string; readme: string }[] = [
  { route: 'POST /prompts/{promptId}/completions', schema: 'CreateChatCompletionStreamResponse', readme: 'with `stream: true` it streams the chunks of `/v1/chat/completions`' },
];

/** Keys of a provider (virtual key) outside the document's Providers schema. */
const PROVIDER_EXTRAS = ['id', 'workspace_id', 'input_guardrails', 'output_guardrails'];

export const documented: DocumentedDifference[] = [
  {
    // The closest configuration variant has one of these keys; the others are extra to it.
    ...extraKeys('GET /integrations/{slug}', /^\/configurations$/, ['default_model', 'custom_host', 'openai_organization']),
    readme: '`configurations.default_model`',
  },
  {
    route: 'POST /prompts/{promptId}/completions',
    path: /^\/body\/choices\/\d+\/message$/,
    message: /^extra key 'refusal'$/,
    readme: "the Portkey document's older copy of the chat completion lacks `message.refusal`",
  },
  {
    ...extraKeys('GET /policies/usage-limits/{policyUsageLimitsId}/entities', /^\/data\/\d+$/, ['credit_limit', 'period_key', 'status']),
    readme: 'items carry `credit_limit`, `period_key` and `status`',
  },
  {
    route: 'POST /embeddings',
    path: /^\/data\/\d+\/embedding$/,
    message: /^must be array$/,
    readme: '`encoding_format: "base64"` answers each `embedding` as a base64 string',
  },
  ...[extraKeys('GET /providers', /^\/data\/\d+$/, PROVIDER_EXTRAS), extraKeys('GET /providers/{slug}', /^$/, PROVIDER_EXTRAS)].map((difference) => ({
    ...difference,
    readme: 'Providers (`GET /v1/providers`, `GET /v1/providers/{slug}`) carry `id`, `workspace_id`, `input_guardrails` and `output_guardrails`',
  })),
];

/** Mismatches being worked on: none today. */
export const pending: PendingMismatch[] = [];

const matches = (difference: Difference, problem: Problem) =>
  difference.route === problem.route && difference.path.test(problem.path) && difference.message.test(problem.message);

/** A documented difference covers this problem. */
export const isAllowed = (problem: Problem) => documented.some((difference) => matches(difference, problem));

/** The pending mismatch this problem is, if any. */
export const pendingFor = (problem: Problem) => pending.find((mismatch) => matches(mismatch, problem));

/** The documented status whose schema an answer with `status` is checked against. */
export const allowedStatus = (status: number) => statusStandIns.find((standIn) => standIn.status === status)?.as ?? status;
