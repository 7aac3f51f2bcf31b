import {
  createAssistantBody,
  createMessageBody,
  createRunBody,
  createThreadAndRunBody,
  createThreadBody,
  eventsQuery,
  listMessagesQuery,
  listQuery,
  modifyAssistantBody,
  modifyMetadataBody,
  modifyThreadBody,
  submitToolOutputsBody,
} from '../bodies/runs.js';
import { runsContract as contract } from '../../schema/contracts.js';
import { parsedInput } from '../../schema/contract-input.js';
import { cursorListBody, type RestInput, type RestRefusal, type RouteRow } from '../route.js';
import { sharedEvents } from '../sse.js';
import { jsonText } from '../../src/lib/json-text.js';

/*
 * Runs on threads (docs/contract.md#runs), OpenAI Assistants v2 compatible. Every row needs the beta header;
 * the virtual key (x-gateway-virtual-key / x-portkey-virtual-key) is read by the GraphQL resolvers
 * of the rows that make a model work. `stream: true` answers with the run's events as SSE.
 */

const BETA = 'assistants=v2';

/** `Vendor-Beta: assistants=v2` or `OpenAI-Beta: assistants=v2` (a comma-separated list may hold more). */
function betaRefusal(headers: Headers): RestRefusal | null {
  const values = [headers.get('vendor-beta'), headers.get('openai-beta')].filter((v): v is string => v !== null);
  if (values.some((value) => value.split(',').some((part) => part.trim() === BETA))) return null;
  return {
    status: 400,
    code: 'invalid_beta',
    message: `This route needs the beta header 'Vendor-Beta: ${BETA}' (or 'OpenAI-Beta: ${BETA}').`,
  };
}

const BETA_HEADERS: RouteRow['headers'] = { 'OpenAI-Beta': { required: true, description: `\`${BETA}\` (or send \`Vendor-Beta: ${BETA}\` instead).` } };

/** What every runs row shares: the beta header, checked before the body. */
const beta = { precheck: ({ headers }) => betaRefusal(headers), headers: BETA_HEADERS } satisfies Pick<RouteRow, 'precheck' | 'headers'>;

/** The SSE `id` a client resumes after: `Last-Event-ID` (checked here), else `?after=`. */
function lastEventId(headers: Headers): number | null {
  const raw = headers.get('last-event-id');
  return raw === null || raw.trim() === '' ? null : Number(raw.trim());
}

const eventsPrecheck: RouteRow['precheck'] = ({ headers }) => {
  const refusal = betaRefusal(headers);
  if (refusal) return refusal;
  const id = lastEventId(headers);
  if (id !== null && !(Number.isInteger(id) && id >= 0 && id <= 2_147_483_647)) {
    return { status: 400, code: 'invalid_value', param: 'Last-Event-ID', message: "Invalid 'Last-Event-ID' header: expected the sequence number of an event (a non-negative integer)." };
  }
  return null;
};

type RunEventPayload = { sequence: number; event: string; data: unknown };

/**
 * One run event as SSE, serialised once however many streams follow the run: with the text the
 * run's log was written with, when this process wrote it (jsonText).
 */
const toSse = sharedEvents<RunEventPayload>(
  (payload) => payload.data,
  (payload) => ({ event: payload.event, id: payload.sequence, data: jsonText(payload.data) }),
  (event, payload) => event.id === payload.sequence && event.event === payload.event,
);

/** A run as a mutation returns it, minus the `stream_after` bookkeeping field. */
function runOf(run: Record<string, unknown>): Record<string, unknown> {
  const { stream_after: _after, ...rest } = run;
  return rest;
}

/** After a run mutation: its events from the one before it, live until the run ends or waits. */
function runStream(field: string): NonNullable<RouteRow['stream']> {
  return {
    when: ({ body }) => body.stream === true,
    operation: 'RestRunEvents',
    variables: (_input, data) => ({ threadId: data[field].thread_id, runId: data[field].id, after: data[field].stream_after ?? 0 }),
    event: toSse,
  };
}

const page = ({ query }: RestInput) => ({ limit: query.limit, order: query.order, after: query.after, before: query.before });

export const runsRoutes: RouteRow[] = [
  {
    method: 'POST',
    path: '/v1/assistants',
    operation: 'RestCreateAssistant',
    ...beta,
    body: createAssistantBody,
    variables: (rest) => ({ input: parsedInput(contract.createAssistantContract, rest) }),
  },
  {
    method: 'GET',
    path: '/v1/assistants',
    operation: 'RestListAssistants',
    ...beta,
    query: listQuery,
    variables: page,
    result: (data) => cursorListBody(data.assistants),
  },
  { method: 'GET', path: '/v1/assistants/:id', operation: 'RestGetAssistant', ...beta, variables: ({ params }) => ({ id: params.id }) },
  {
    method: 'POST',
    path: '/v1/assistants/:id',
    operation: 'RestModifyAssistant',
    ...beta,
    body: modifyAssistantBody,
    variables: (rest) => ({ id: rest.params.id, input: parsedInput(contract.modifyAssistantContract, rest) }),
  },
  { method: 'DELETE', path: '/v1/assistants/:id', operation: 'RestDeleteAssistant', ...beta, variables: ({ params }) => ({ id: params.id }) },
  {
    method: 'POST',
    path: '/v1/threads',
    operation: 'RestCreateThread',
    ...beta,
    body: createThreadBody,
    variables: (rest) => ({ input: parsedInput(contract.createThreadContract, rest) }),
  },
  {
    method: 'POST',
    path: '/v1/threads/runs',
    operation: 'RestCreateThreadAndRun',
    dataPlane: true,
    ...beta,
    body: createThreadAndRunBody,
    variables: (rest) => ({ input: parsedInput(contract.createThreadAndRunContract, rest) }),
    result: (data) => runOf(data.createThreadAndRun),
    stream: runStream('createThreadAndRun'),
  },
  { method: 'GET', path: '/v1/threads/:thread_id', operation: 'RestGetThread', ...beta, variables: ({ params }) => ({ id: params.thread_id }) },
  {
    method: 'POST',
    path: '/v1/threads/:thread_id',
    operation: 'RestModifyThread',
    ...beta,
    body: modifyThreadBody,
    variables: (rest) => ({ id: rest.params.thread_id, input: parsedInput(contract.modifyThreadContract, rest) }),
  },
  { method: 'DELETE', path: '/v1/threads/:thread_id', operation: 'RestDeleteThread', ...beta, variables: ({ params }) => ({ id: params.thread_id }) },
  {
    method: 'POST',
    path: '/v1/threads/:thread_id/messages',
    operation: 'RestCreateMessage',
    ...beta,
    body: createMessageBody,
    variables: (rest) => ({ threadId: rest.params.thread_id, input: parsedInput(contract.createMessageContract, rest) }),
  },
  {
    method: 'GET',
    path: '/v1/threads/:thread_id/messages',
    operation: 'RestListMessages',
    ...beta,
    query: listMessagesQuery,
    variables: (input) => ({ threadId: input.params.thread_id, runId: input.query.run_id, ...page(input) }),
    result: (data) => cursorListBody(data.messages),
  },
  {
    method: 'GET',
    path: '/v1/threads/:thread_id/messages/:message_id',
    operation: 'RestGetMessage',
    ...beta,
    variables: ({ params }) => ({ threadId: params.thread_id, id: params.message_id }),
  },
  {
    method: 'POST',
    path: '/v1/threads/:thread_id/messages/:message_id',
    operation: 'RestModifyMessage',
    ...beta,
    body: modifyMetadataBody,
    variables: (rest) => ({ threadId: rest.params.thread_id, id: rest.params.message_id, input: parsedInput(contract.modifyMetadataContract, rest) }),
  },
  {
    method: 'DELETE',
    path: '/v1/threads/:thread_id/messages/:message_id',
    operation: 'RestDeleteMessage',
    ...beta,
    variables: ({ params }) => ({ threadId: params.thread_id, id: params.message_id }),
  },
  {
    method: 'POST',
    path: '/v1/threads/:thread_id/runs',
    operation: 'RestCreateRun',
    dataPlane: true,
    ...beta,
    body: createRunBody,
    variables: (rest) => ({ threadId: rest.params.thread_id, input: parsedInput(contract.createRunContract, rest) }),
    result: (data) => runOf(data.createRun),
    stream: runStream('createRun'),
  },
  {
    method: 'GET',
    path: '/v1/threads/:thread_id/runs',
    operation: 'RestListRuns',
    ...beta,
    query: listQuery,
    variables: (input) => ({ threadId: input.params.thread_id, ...page(input) }),
    result: (data) => cursorListBody(data.runs),
  },
  {
    method: 'GET',
    path: '/v1/threads/:thread_id/runs/:run_id',
    operation: 'RestGetRun',
    ...beta,
    variables: ({ params }) => ({ threadId: params.thread_id, id: params.run_id }),
  },
  {
    method: 'POST',
    path: '/v1/threads/:thread_id/runs/:run_id',
    operation: 'RestModifyRun',
    ...beta,
    body: modifyMetadataBody,
    variables: (rest) => ({ threadId: rest.params.thread_id, runId: rest.params.run_id, input: parsedInput(contract.modifyMetadataContract, rest) }),
  },
  {
    method: 'POST',
    path: '/v1/threads/:thread_id/runs/:run_id/cancel',
    operation: 'RestCancelRun',
    ...beta,
    variables: ({ params }) => ({ threadId: params.thread_id, runId: params.run_id }),
  },
  {
    method: 'GET',
    path: '/v1/threads/:thread_id/runs/:run_id/steps',
    operation: 'RestListRunSteps',
    ...beta,
    query: listQuery,
    variables: (input) => ({ threadId: input.params.thread_id, runId: input.params.run_id, ...page(input) }),
    result: (data) => cursorListBody(data.run.steps),
  },
  {
    method: 'GET',
    path: '/v1/threads/:thread_id/runs/:run_id/steps/:step_id',
    operation: 'RestGetRunStep',
    ...beta,
    variables: ({ params }) => ({ threadId: params.thread_id, runId: params.run_id, id: params.step_id }),
  },
  {
    method: 'POST',
    path: '/v1/threads/:thread_id/runs/:run_id/submit_tool_outputs',
    operation: 'RestSubmitToolOutputs',
    dataPlane: true,
    ...beta,
    body: submitToolOutputsBody,
    variables: (rest) => ({ threadId: rest.params.thread_id, runId: rest.params.run_id, input: parsedInput(contract.submitToolOutputsContract, rest) }),
    result: (data) => runOf(data.submitToolOutputs),
    stream: runStream('submitToolOutputs'),
  },
  {
    // Replays the run's events after Last-Event-ID (or ?after=), then follows live ones to [DONE].
    method: 'GET',
    path: '/v1/threads/:thread_id/runs/:run_id/events',
    operation: 'RestGetRun',
    precheck: eventsPrecheck,
    headers: { ...BETA_HEADERS, 'Last-Event-ID': { description: 'Resume after this event sequence number (wins over `?after=`).' } },
    query: eventsQuery,
    variables: ({ params }) => ({ threadId: params.thread_id, id: params.run_id }),
    stream: {
      when: () => true,
      operation: 'RestRunEvents',
      variables: ({ params, headers, query }) => ({
        threadId: params.thread_id,
        runId: params.run_id,
        after: lastEventId(headers) ?? query.after ?? 0,
      }),
      event: toSse,
    },
  },
];
