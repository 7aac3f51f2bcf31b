import { defineEntity, type InferEntity } from '@mikro-orm/core';

export const MESSAGE_STATUSES = ['in_progress', 'incomplete', 'completed'] as const;
export type MessageStatus = (typeof MESSAGE_STATUSES)[number];

/** One text part, as OpenAI's `content` array holds it. */
export interface TextContent {
  type: 'text';
  text: { value: string; annotations: unknown[] };
}

/** A message of a thread: the user's, or one a run wrote (OpenAI `thread.message`). */
export const MessageSchema = defineEntity({
  name: 'Message',
  tableName: 'thread_messages',
  properties: (p) => ({
    id: p.string().primary(),
    organisationId: p.uuid(),
    workspaceId: p.uuid(),
    threadId: p.string(),
    /** Orders messages and run steps of a thread into one conversation. */
    ordinal: p.bigint('number'),
    role: p.enum(['user', 'assistant'] as const),
    content: p.json<TextContent[]>(),
    assistantId: p.string().nullable(),
    runId: p.string().nullable(),
    attachments: p.json<unknown[]>(),
    metadata: p.json<Record<string, string>>(),
    status: p.enum(['in_progress', 'incomplete', 'completed'] as const),
    incompleteDetails: p.json<{ reason: string }>().nullable(),
    createdAt: p.datetime(),
    completedAt: p.datetime().nullable(),
    incompleteAt: p.datetime().nullable(),
  }),
  // A thread's messages in order, as every read of them asks (migration 0010): one index where a
  // thread index and an ordinal index were two pages written per message.
  indexes: [{ properties: ['threadId', 'ordinal'] }],
});

export type Message = InferEntity<typeof MessageSchema>;
