import http from 'node:http';
import { createRequire } from 'node:module';
import { prefixedId, timeOrderedUuid } from '../src/lib/ids.js';
import type { Message, TextContent } from '../src/modules/runs/message.entity.js';
import { nextOrdinal } from '../src/modules/runs/ordinal.js';
import type { RunStep } from '../src/modules/runs/run-step.entity.js';
import type { Run } from '../src/modules/runs/run.entity.js';
import type { Thread } from '../src/modules/runs/thread.entity.js';
import { messageDelta, messageObject, runObject, runStepObject, threadObject } from '../src/modules/runs/wire.js';
import { serveIpcChild } from './lib.js';

/**
 * The floor of a durable streamed run (bench/streamed.ts): what any Node process adds if it does only
 * the irreducible work of `POST /v1/threads/runs` with `stream: true` on a new thread, on SQLite, and
 * nothing else: no authentication, no GraphQL, no ORM, no policies, no admission, no follower. It
 * writes the rows Gatehouse writes (the tables and indexes below are copied from its migrated
 * schema), in two transactions on one better-sqlite3 connection (WAL, synchronous = NORMAL, as
 * src/db/orm.ts opens it), with statements prepared once:
 *
 * 1. the thread, the user message, the queued run and its first three events, then the answer's
 *    head and those three frames;
 * 2. once the upstream's streamed chat completion has been read to `[DONE]` (a keep-alive agent,
 *    as bench/chat-proxy.ts): the run completed with its usage, the thread freed, the assistant
 *    message, its message-creation step and the other events in one multi-row insert; then their
 *    frames, `event: done` / `data: [DONE]`, and the end.
 *
 * Each event's data is the OpenAI object, made by Gatehouse's own wire functions
 * (src/modules/runs/wire.ts) and serialised once for its row and its frame. Started with an IPC
 * channel (bench/lib.ts startIpcChild) and two arguments: the upstream's origin and the SQLite
 * file to create. It answers the bench as bench/chat-proxy.ts does (lib.ts serveIpcChild).
 */
const upstream = new URL(process.argv[2]!);
const database = process.argv[3]!;
const agent = new http.Agent({ keepAlive: true });
const UPSTREAM_HEADERS = { 'content-type': 'application/json', authorization: 'Bearer sk-bench' };
const SSE_HEADERS = { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache', connection: 'keep-alive', 'x-accel-buffering': 'no' };

/** The part of better-sqlite3 used here (the project declares no types for it). */
interface Db {
  exec(sql: string): void;
  prepare(sql: string): { run(...values: unknown[]): unknown };
  close(): void;
}
const Database = createRequire(import.meta.url)('better-sqlite3') as new (file: string) => Db;

/** Gatehouse's tables and indexes for threads and runs, as its migrations leave them on SQLite. */
const SCHEMA = [
  "CREATE TABLE `thread_messages` (`id` text not null, `organisation_id` text not null, `workspace_id` text not null, `thread_id` text not null, `ordinal` bigint not null, `role` text check (`role` in ('user', 'assistant')) not null, `content` json not null, `assistant_id` text null, `run_id` text null, `attachments` json not null, `metadata` json not null, `status` text check (`status` in ('in_progress', 'incomplete', 'completed')) not null, `incomplete_details` json null, `created_at` datetime not null, `completed_at` datetime null, `incomplete_at` datetime null, primary key (`id`))",
  "CREATE TABLE `runs` (`id` text not null, `organisation_id` text not null, `workspace_id` text not null, `thread_id` text not null, `assistant_id` text not null, `ordinal` bigint not null, `status` text check (`status` in ('queued', 'in_progress', 'requires_action', 'cancelling', 'cancelled', 'failed', 'completed', 'incomplete', 'expired')) not null, `required_tool_calls` json null, `last_error` json null, `incomplete_details` json null, `created_at` datetime not null, `expires_at` datetime null, `started_at` datetime null, `cancelled_at` datetime null, `failed_at` datetime null, `completed_at` datetime null, `model` text not null, `instructions` text not null, `tools` json not null, `metadata` json not null, `prompt_tokens` integer not null, `completion_tokens` integer not null, `max_prompt_tokens` integer null, `max_completion_tokens` integer null, `truncation_strategy` json not null, `tool_choice` json not null, `parallel_tool_calls` integer not null, `response_format` json not null, `temperature` double null, `top_p` double null, `virtual_key` text not null, `provider_id` text null, `api_key_id` text null, `event_seq` integer not null, `updated_at` datetime not null, `lease_owner` text null, `lease_expires_at` bigint null, `admission_kind` text null, `admission_request_id` text null, primary key (`id`))",
  'CREATE INDEX `runs_status_index` on `runs` (`status`)',
  "CREATE TABLE `run_steps` (`id` text not null, `organisation_id` text not null, `workspace_id` text not null, `run_id` text not null, `thread_id` text not null, `assistant_id` text not null, `ordinal` bigint not null, `type` text check (`type` in ('message_creation', 'tool_calls')) not null, `status` text check (`status` in ('in_progress', 'cancelled', 'failed', 'completed', 'expired')) not null, `step_details` json not null, `last_error` json null, `usage` json null, `created_at` datetime not null, `expired_at` datetime null, `cancelled_at` datetime null, `failed_at` datetime null, `completed_at` datetime null, primary key (`id`))",
  'CREATE INDEX `run_steps_run_id_index` on `run_steps` (`run_id`)',
  'CREATE TABLE `threads` (`id` text not null, `organisation_id` text not null, `workspace_id` text not null, `ordinal` bigint not null, `metadata` json not null, `tool_resources` json not null, `active_run_id` text null, `created_at` datetime not null, primary key (`id`))',
  'CREATE TABLE "run_events" (`run_id` text not null, `sequence` integer not null, `event` text not null, `data` json not null, `created_at` datetime not null, primary key (`run_id`, `sequence`))',
  'CREATE INDEX `thread_messages_thread_id_ordinal_index` on `thread_messages` (`thread_id`, `ordinal`)',
  'CREATE INDEX `runs_thread_id_ordinal_index` on `runs` (`thread_id`, `ordinal`)',
  'CREATE INDEX `threads_workspace_id_ordinal_index` on `threads` (`workspace_id`, `ordinal`)',
];

const db = new Database(database);
db.exec('PRAGMA journal_mode = WAL; PRAGMA busy_timeout = 0; PRAGMA synchronous = NORMAL;');
db.exec(SCHEMA.join(';\n'));

const begin = db.prepare('begin immediate');
const commit = db.prepare('commit');
const rollback = db.prepare('rollback');
const insertThread = db.prepare(
  'insert into threads (id, organisation_id, workspace_id, ordinal, metadata, tool_resources, active_run_id, created_at) values (?, ?, ?, ?, ?, ?, ?, ?)',
);
const insertMessage = db.prepare(
  'insert into thread_messages (id, organisation_id, workspace_id, thread_id, ordinal, role, content, assistant_id, run_id, attachments, metadata, status, incomplete_details, created_at, completed_at, incomplete_at) values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, null, ?, ?, null)',
);
const insertRun = db.prepare(
  'insert into runs (id, organisation_id, workspace_id, thread_id, assistant_id, ordinal, status, required_tool_calls, last_error, incomplete_details, created_at, expires_at, started_at, cancelled_at, failed_at, completed_at, model, instructions, tools, metadata, prompt_tokens, completion_tokens, max_prompt_tokens, max_completion_tokens, truncation_strategy, tool_choice, parallel_tool_calls, response_format, temperature, top_p, virtual_key, provider_id, api_key_id, event_seq, updated_at, lease_owner, lease_expires_at, admission_kind, admission_request_id) ' +
    "values (?, ?, ?, ?, ?, ?, 'queued', null, null, null, ?, ?, null, null, null, null, ?, '', '[]', '{}', 0, 0, null, null, ?, '\"auto\"', 1, '\"auto\"', null, null, ?, ?, ?, 3, ?, null, null, 'create_thread_and_run', ?)",
);
const completeRun = db.prepare(
  "update runs set status = 'completed', expires_at = null, started_at = ?, completed_at = ?, prompt_tokens = ?, completion_tokens = ?, event_seq = ?, updated_at = ? where id = ?",
);
const freeThread = db.prepare('update threads set active_run_id = null where id = ?');
const insertStep = db.prepare(
  "insert into run_steps (id, organisation_id, workspace_id, run_id, thread_id, assistant_id, ordinal, type, status, step_details, last_error, usage, created_at, expired_at, cancelled_at, failed_at, completed_at) values (?, ?, ?, ?, ?, ?, ?, 'message_creation', 'completed', ?, null, ?, ?, null, null, null, ?)",
);
const EVENT_ROW = '(?, ?, ?, ?, ?)';
/** The multi-row event insert for `rows` events, prepared once per row count. */
const insertEvents = new Map<number, ReturnType<Db['prepare']>>();
function eventInsert(rows: number): ReturnType<Db['prepare']> {
  let statement = insertEvents.get(rows);
  if (!statement) {
    statement = db.prepare(`insert into run_events (run_id, sequence, event, data, created_at) values ${Array(rows).fill(EVENT_ROW).join(', ')}`);
    insertEvents.set(rows, statement);
  }
  return statement;
}

// The tenancy, assistant's integration and key Gatehouse would have resolved.
const ORGANISATION = timeOrderedUuid();
const WORKSPACE = timeOrderedUuid();
const PROVIDER = timeOrderedUuid();
const API_KEY = timeOrderedUuid();
const MODEL = 'gpt-4o-mini';
const TRUNCATION = '{"type":"auto","last_messages":null}';
/** A run's lifetime before it expires (Gatehouse's default: 10 minutes). */
const EXPIRES_MS = 600_000;

const textContent = (value: string): TextContent[] => [{ type: 'text', text: { value, annotations: [] } }];
interface Usage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
}

/*
 * The events' objects are made by Gatehouse's own wire functions (src/modules/runs/wire.ts, pure:
 * entity fields in, OpenAI's shape out), from the fields they read, so the floor's events are
 * Gatehouse's by construction and cost what Gatehouse's cost to make.
 */
function runRow(id: string, threadId: string, assistantId: string, createdAt: Date): Run {
  return {
    id,
    threadId,
    assistantId,
    status: 'queued',
    requiredToolCalls: null,
    lastError: null,
    incompleteDetails: null,
    createdAt,
    expiresAt: new Date(createdAt.getTime() + EXPIRES_MS),
    startedAt: null,
    cancelledAt: null,
    failedAt: null,
    completedAt: null,
    model: MODEL,
    instructions: '',
    tools: [],
    metadata: {},
    promptTokens: 0,
    completionTokens: 0,
    maxPromptTokens: null,
    maxCompletionTokens: null,
    truncationStrategy: { type: 'auto', last_messages: null },
    toolChoice: 'auto',
    parallelToolCalls: true,
    responseFormat: 'auto',
    temperature: null,
    topP: null,
  } as unknown as Run;
}

function stepRow(id: string, run: Run, messageId: string, createdAt: Date): RunStep {
  return {
    id,
    runId: run.id,
    assistantId: run.assistantId,
    threadId: run.threadId,
    type: 'message_creation',
    status: 'in_progress',
    stepDetails: { type: 'message_creation', message_creation: { message_id: messageId } },
    lastError: null,
    usage: null,
    createdAt,
    expiredAt: null,
    cancelledAt: null,
    failedAt: null,
    completedAt: null,
  } as unknown as RunStep;
}

function messageRow(id: string, run: Run, createdAt: Date): Message {
  return {
    id,
    threadId: run.threadId,
    role: 'assistant',
    content: [],
    assistantId: run.assistantId,
    runId: run.id,
    attachments: [],
    metadata: {},
    status: 'in_progress',
    incompleteDetails: null,
    createdAt,
    completedAt: null,
    incompleteAt: null,
  } as unknown as Message;
}

const frame = (event: string, data: string) => `event: ${event}\ndata: ${data}\n\n`;

/** What the upstream's streamed chat completion said: its content deltas and its usage. */
interface Answer {
  deltas: string[];
  usage: Usage;
}

interface UserMessage {
  role: 'user';
  content: string;
}

/** Streams a chat completion of `messages` from the upstream and reads it to `[DONE]`. */
function complete(messages: UserMessage[], done: (answer: Answer) => void, failed: () => void): void {
  const body = JSON.stringify({ model: MODEL, messages, stream: true, stream_options: { include_usage: true } });
  const request = http.request(
    { host: upstream.hostname, port: upstream.port, method: 'POST', path: '/v1/chat/completions', agent, headers: UPSTREAM_HEADERS },
    (response) => {
      const answer: Answer = { deltas: [], usage: { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 } };
      let pending = '';
      let finished = false;
      response.setEncoding('utf8');
      response.on('data', (piece: string) => {
        pending += piece;
        for (let end = pending.indexOf('\n'); end !== -1; end = pending.indexOf('\n')) {
          const line = pending.slice(0, end);
          pending = pending.slice(end + 1);
          if (!line.startsWith('data: ')) continue;
          const data = line.slice(6);
          if (data === '[DONE]') {
            finished = true;
            continue;
          }
          const chunk = JSON.parse(data) as { choices: Array<{ delta: { content?: string } }>; usage?: Usage };
          const delta = chunk.choices[0]?.delta.content;
          if (delta) answer.deltas.push(delta);
          if (chunk.usage) answer.usage = chunk.usage;
        }
      });
      response.on('end', () => (finished ? done(answer) : failed()));
      response.on('error', failed);
    },
  );
  request.on('error', failed);
  request.end(body);
}

/** Runs `work` in one `begin immediate` … `commit` transaction. */
function transaction(work: () => void): void {
  begin.run();
  try {
    work();
    commit.run();
  } catch (error) {
    rollback.run();
    throw error;
  }
}

function streamedRun(raw: string, res: http.ServerResponse): void {
  const input = JSON.parse(raw) as { assistant_id: string; thread: { messages: UserMessage[] }; stream: true };
  const messages = input.thread.messages;
  const createdAt = new Date();
  const created = createdAt.getTime();
  const run = runRow(prefixedId('run'), prefixedId('thread'), input.assistant_id, createdAt);
  const { id: runId, threadId, assistantId } = run;
  const threadText = JSON.stringify(threadObject({ id: threadId, createdAt, metadata: {}, toolResources: {} } as unknown as Thread));
  const queuedText = JSON.stringify(runObject(run));
  transaction(() => {
    insertThread.run(threadId, ORGANISATION, WORKSPACE, nextOrdinal(), '{}', '{}', runId, created);
    for (const { content } of messages)
      insertMessage.run(prefixedId('msg'), ORGANISATION, WORKSPACE, threadId, nextOrdinal(), 'user', JSON.stringify(textContent(content)), null, null, '[]', '{}', 'completed', created, created);
    insertRun.run(runId, ORGANISATION, WORKSPACE, threadId, assistantId, nextOrdinal(), created, created + EXPIRES_MS, MODEL, TRUNCATION, 'upstream', PROVIDER, API_KEY, created, timeOrderedUuid());
    eventInsert(3).run(runId, 1, 'thread.created', threadText, created, runId, 2, 'thread.run.created', queuedText, created, runId, 3, 'thread.run.queued', queuedText, created);
  });
  res.writeHead(200, SSE_HEADERS);
  res.write(frame('thread.created', threadText) + frame('thread.run.created', queuedText) + frame('thread.run.queued', queuedText));

  complete(
    messages,
    ({ deltas, usage }) => {
      const now = new Date();
      const at = now.getTime();
      const text = deltas.join('');
      run.status = 'in_progress';
      run.startedAt = now;
      const message = messageRow(prefixedId('msg'), run, now);
      const step = stepRow(prefixedId('step'), run, message.id, now);
      const stepText = JSON.stringify(runStepObject(step));
      const messageText = JSON.stringify(messageObject(message));
      // The events after the first three, in order: [event, data] pairs.
      const events: string[] = ['thread.run.in_progress', JSON.stringify(runObject(run)), 'thread.run.step.created', stepText, 'thread.run.step.in_progress', stepText, 'thread.message.created', messageText, 'thread.message.in_progress', messageText];
      for (const value of deltas) events.push('thread.message.delta', JSON.stringify(messageDelta(message.id, value)));
      message.status = 'completed';
      message.completedAt = now;
      message.content = textContent(text);
      step.status = 'completed';
      step.completedAt = now;
      step.usage = usage;
      run.status = 'completed';
      run.completedAt = now;
      run.promptTokens = usage.prompt_tokens;
      run.completionTokens = usage.completion_tokens;
      events.push(
        'thread.message.completed',
        JSON.stringify(messageObject(message)),
        'thread.run.step.completed',
        JSON.stringify(runStepObject(step)),
        'thread.run.completed',
        JSON.stringify(runObject(run)),
      );
      const count = events.length / 2;
      const values: unknown[] = [];
      let frames = '';
      for (let i = 0; i < count; i++) {
        values.push(runId, 4 + i, events[2 * i], events[2 * i + 1], at);
        frames += frame(events[2 * i]!, events[2 * i + 1]!);
      }
      // The step is ordered before its message, as Gatehouse orders them.
      const stepOrdinal = nextOrdinal();
      transaction(() => {
        completeRun.run(at, at, usage.prompt_tokens, usage.completion_tokens, 3 + count, at, runId);
        freeThread.run(threadId);
        insertMessage.run(message.id, ORGANISATION, WORKSPACE, threadId, nextOrdinal(), 'assistant', JSON.stringify(message.content), assistantId, runId, '[]', '{}', 'completed', at, at);
        insertStep.run(step.id, ORGANISATION, WORKSPACE, runId, threadId, assistantId, stepOrdinal, JSON.stringify(step.stepDetails), JSON.stringify(usage), at, at);
        eventInsert(count).run(...values);
      });
      res.end(frames + 'event: done\ndata: [DONE]\n\n');
    },
    () => res.destroy(),
  );
}

const server = http.createServer((req, res) => {
  if (req.method !== 'POST' || req.url !== '/v1/threads/runs') {
    res.writeHead(404).end();
    return;
  }
  let raw = '';
  req.setEncoding('utf8');
  req.on('data', (piece: string) => (raw += piece));
  req.on('end', () => streamedRun(raw, res));
});
await serveIpcChild(server, () => db.close());
