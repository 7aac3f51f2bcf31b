/**
 * Checks one recorded Gatehouse response against the document operation it answers: the JSON body
 * against the status's schema, or, for a stream, every event (runs: by its `event:` name against
 * the matching branch of OpenAI's AssistantStreamEvent; chat completions: each chunk against the
 * route's `text/event-stream` schema).
 */
import type { ErrorObject } from 'ajv';
import type { RecordedResponse } from '../helpers/app.js';
import { documents, type Operation } from './documents.js';
import { allowedStatus, isAllowed, streamStandIns } from './differences.js';

export interface Problem {
  /** `METHOD /template` of the document operation. */
  route: string;
  status: number;
  /** Where in the answer: `body`, or `event 3 (thread.run.created)`. */
  where: string;
  /** JSON pointer inside that body or event's data. */
  path: string;
  message: string;
}

export interface Checked {
  operation: Operation | undefined;
  /** The document describes the answer's status for this operation (its body, or that it has none). */
  documented: boolean;
  /** A document schema was applied (a documented status with a JSON or stream schema). */
  validated: boolean;
  problems: Problem[];
}

const routeOf = (operation: Operation) => `${operation.method} ${operation.template}`;

const isNullSchema = (schema: unknown) => typeof schema === 'object' && schema !== null && Object.keys(schema).length === 1 && (schema as { type?: unknown }).type === 'null';

const keyOf = (error: ErrorObject) =>
  error.keyword === 'unevaluatedProperties' || error.keyword === 'additionalProperties'
    ? `extra key '${(error.params as any).unevaluatedProperty ?? (error.params as any).additionalProperty}'`
    : `${error.message}${error.keyword === 'enum' ? ` ${JSON.stringify((error.params as any).allowedValues)}` : ''}`;

/**
 * ajv's errors as problems, one per place and message, without the documented differences.
 * Where a value matches none of a `oneOf`/`anyOf`'s variants, ajv lists what every variant
 * missed: the problems are those of the variant that came closest (fewest problems), when the
 * variants are named schemas, else one problem at that place with the first few reasons.
 */
function problemsFrom(operation: Operation, status: number, where: string, errors: ErrorObject[] | null | undefined, prefix = ''): Problem[] {
  return rawProblems(operation, status, where, errors, prefix).filter((problem) => !isAllowed(problem));
}

function rawProblems(operation: Operation, status: number, where: string, errors: ErrorObject[] | null | undefined, prefix: string): Problem[] {
  // `nullable` became `anyOf: [schema, {type: 'null'}]`: its failure is the schema's own errors.
  const nullableWrapper = (e: ErrorObject) => e.keyword === 'anyOf' && Array.isArray(e.schema) && e.schema.length === 2 && e.schema.some(isNullSchema);
  const nullWrappers = (errors ?? []).filter(nullableWrapper).map((e) => e.instancePath);
  const all = (errors ?? []).filter((e) => !nullableWrapper(e) && !(e.keyword === 'type' && isNullSchema(e.parentSchema) && nullWrappers.includes(e.instancePath)));
  const inside = (path: string, at: string) => path === at || path.startsWith(`${at}/`);
  // ajv reports a oneOf after its variants' errors, so at one place the last one is the outermost.
  const summaries = new Map<string, ErrorObject>();
  for (const e of all) if (e.keyword === 'oneOf' || e.keyword === 'anyOf') summaries.set(e.instancePath, e);
  const outermost = [...summaries.values()].filter((e) => ![...summaries.keys()].some((at) => at !== e.instancePath && inside(e.instancePath, at)));
  const seen = new Set<string>();
  const problems: Problem[] = [];
  const add = (problem: Problem) => {
    if (seen.has(`${problem.path} ${problem.message}`)) return;
    seen.add(`${problem.path} ${problem.message}`);
    problems.push(problem);
  };
  for (const summary of outermost) {
    const at = summary.instancePath;
    const variants = Array.isArray(summary.schema) ? (summary.schema as { $ref?: unknown }[]) : [];
    if (variants.length > 0 && variants.every((variant) => typeof variant.$ref === 'string' && variant.$ref.startsWith('#/'))) {
      const tried = variants.map((variant) => {
        const validate = documents().refValidator(operation.document, variant.$ref as string);
        return validate(summary.data) ? [] : rawProblems(operation, status, where, validate.errors, prefix + at);
      });
      tried.reduce((best, next) => (next.length < best.length ? next : best)).forEach(add);
    } else {
      const reasons = [...new Set(all.filter((e) => inside(e.instancePath, at) && e !== summary).map((e) => `${e.instancePath.slice(at.length) || '/'} ${keyOf(e)}`))];
      add({ route: routeOf(operation), status, where, path: prefix + at, message: `matches none of the document's variants (${reasons.slice(0, 3).join('; ')}${reasons.length > 3 ? '; …' : ''})` });
    }
  }
  for (const error of all) {
    if (!outermost.some((summary) => inside(error.instancePath, summary.instancePath))) add({ route: routeOf(operation), status, where, path: prefix + error.instancePath, message: keyOf(error) });
  }
  return problems;
}

interface SseEvent {
  event?: string;
  data: string;
}

function parseEvents(text: string): SseEvent[] {
  return text
    .split('\n\n')
    .map((block) => {
      const event: SseEvent = { data: '' };
      for (const line of block.split('\n')) {
        if (line.startsWith(':')) continue;
        const at = line.indexOf(': ');
        const field = at < 0 ? line : line.slice(0, at);
        const value = at < 0 ? '' : line.slice(at + 2);
        if (field === 'event') event.event = value;
        else if (field === 'data') event.data = event.data ? `${event.data}\n${value}` : value;
      }
      return event;
    })
    .filter((event) => event.data !== '' || event.event !== undefined);
}

let runEventBranches: Map<string, string> | undefined;

/**
 * Each run stream event name → the `$ref` of the AssistantStreamEvent variant that describes it
 * (the groups' `oneOf`, read as `anyOf`, hold one variant per event name).
 */
function runEventBranch(name: string): string | undefined {
  if (!runEventBranches) {
    const schemas = documents().document('openai').components.schemas;
    runEventBranches = new Map();
    for (const group of schemas.AssistantStreamEvent.anyOf as { $ref: string }[]) {
      const groupName = group.$ref.split('/').pop()!;
      const variants: any[] = schemas[groupName].anyOf ?? [schemas[groupName]];
      variants.forEach((variant, i) => {
        const ref = schemas[groupName].anyOf ? `${group.$ref}/anyOf/${i}` : group.$ref;
        for (const event of variant.properties?.event?.enum ?? []) runEventBranches!.set(event, ref);
      });
    }
  }
  return runEventBranches.get(name);
}

function checkStream(operation: Operation, response: RecordedResponse): Checked {
  const docs = documents();
  const problems: Problem[] = [];
  const standIn = streamStandIns.find((s) => s.route === routeOf(operation));
  const chunkValidator = docs.responseValidator(operation, allowedStatus(response.status), 'text/event-stream') ?? (standIn && docs.schemaValidator('openai', standIn.schema));
  const events = parseEvents(response.text);
  events.forEach((event, i) => {
    const where = `event ${i + 1}${event.event ? ` (${event.event})` : ''}`;
    if (event.event !== undefined) {
      const branch = runEventBranch(event.event);
      if (!branch) {
        problems.push({ route: routeOf(operation), status: response.status, where, path: '', message: `event '${event.event}' is not an AssistantStreamEvent` });
        return;
      }
      const validate = docs.refValidator('openai', branch);
      const data = event.data === '[DONE]' ? event.data : JSON.parse(event.data);
      if (!validate({ event: event.event, data })) problems.push(...problemsFrom(operation, response.status, where, validate.errors));
      return;
    }
    if (event.data === '[DONE]' && i === events.length - 1) return;
    if (!chunkValidator) {
      problems.push({ route: routeOf(operation), status: response.status, where, path: '', message: 'a bare data event where the document describes no stream' });
      return;
    }
    if (!chunkValidator(JSON.parse(event.data))) problems.push(...problemsFrom(operation, response.status, where, chunkValidator.errors));
  });
  return { operation, documented: true, validated: true, problems };
}

/**
 * Gatehouse's resume route, which no document has, replays a run's stream: its events are
 * OpenAI's run stream events and are checked as such.
 */
const RESUME = { method: 'GET', regex: /^\/v1\/threads\/[^/]+\/runs\/[^/]+\/events(\?|$)/, template: '/threads/{thread_id}/runs/{run_id}/events' };

/** The problems of one response (none when it conforms or no document describes it). */
export function check(response: RecordedResponse): Checked {
  const operation =
    documents().operationFor(response.method, response.path) ??
    (response.method === RESUME.method && RESUME.regex.test(response.path) ? { document: 'openai' as const, method: RESUME.method, template: RESUME.template } : undefined);
  if (!operation) return { operation, documented: false, validated: false, problems: [] };
  if (response.contentType?.startsWith('text/event-stream')) return checkStream(operation, response);
  const validate = documents().responseValidator(operation, allowedStatus(response.status), 'application/json');
  const documented = documents().hasStatus(operation, allowedStatus(response.status));
  // A success the document does not list would otherwise go unchecked (errors it mostly leaves out).
  if (!documented && response.status < 300 && operation.template !== RESUME.template) {
    return { operation, documented, validated: false, problems: [{ route: routeOf(operation), status: response.status, where: 'status', path: '', message: 'a success status the document does not give for this operation' }] };
  }
  if (!validate) return { operation, documented, validated: false, problems: [] };
  const problems = validate(response.body) ? [] : problemsFrom(operation, response.status, 'body', validate.errors);
  return { operation, documented, validated: true, problems };
}

export const describeProblem = (p: Problem) => `${p.route} ${p.status} ${p.where} ${p.path || '/'}: ${p.message}`;
