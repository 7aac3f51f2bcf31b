import { z } from 'zod';

/*
 * Runs (CONTRACT §4), in wire terms. These schemas check JSON types only (so a wrong type gets
 * OpenAI's "Invalid type for …" message); limits and forms (§8) are checked by the service, so
 * GraphQL and REST refuse the same inputs with the same messages. Unknown keys are ignored,
 * except in submit_tool_outputs, whose published schema forbids them.
 */

const INT32 = 2_147_483_647;
const optionalString = z.string().nullish();
const optionalNumber = z.number().nullish();
const optionalInt = z.number().int().max(INT32).nullish();

const runOptions = {
  assistant_id: z.string(),
  model: optionalString,
  instructions: optionalString,
  tools: z.unknown(),
  metadata: z.unknown(),
  temperature: optionalNumber,
  top_p: optionalNumber,
  max_prompt_tokens: optionalInt,
  max_completion_tokens: optionalInt,
  truncation_strategy: z.unknown(),
  tool_choice: z.unknown(),
  parallel_tool_calls: z.boolean().nullish(),
  response_format: z.unknown(),
  stream: z.boolean().nullish(),
};

export const createAssistantBody = z.object({
  model: z.string(),
  name: optionalString,
  description: optionalString,
  instructions: optionalString,
  tools: z.unknown(),
  tool_resources: z.unknown(),
  metadata: z.unknown(),
  temperature: optionalNumber,
  top_p: optionalNumber,
  response_format: z.unknown(),
});

export const createThreadBody = z.object({
  messages: z.unknown(),
  metadata: z.unknown(),
  tool_resources: z.unknown(),
});

export const createMessageBody = z.object({
  role: z.string(),
  content: z.unknown(),
  attachments: z.unknown(),
  metadata: z.unknown(),
});

export const createRunBody = z.object({
  ...runOptions,
  additional_instructions: optionalString,
  additional_messages: z.unknown(),
});

export const createThreadAndRunBody = z.object({
  ...runOptions,
  thread: z.unknown(),
});

export const submitToolOutputsBody = z
  .object({
    tool_outputs: z.array(z.object({ tool_call_id: z.string(), output: z.string() }).strict()),
    stream: z.boolean().nullish(),
  })
  .strict();

export const listQuery = z.object({
  limit: z.coerce.number().int().optional(),
  order: z.string().optional(),
  after: z.string().optional(),
  before: z.string().optional(),
});

export const listMessagesQuery = listQuery.extend({ run_id: z.string().optional() });

export const eventsQuery = z.object({
  after: z.coerce.number().int().min(0).max(INT32).optional(),
});
