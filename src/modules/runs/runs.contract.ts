/**
 * The runs domain's operation inputs (assistants, threads, messages, runs, tool outputs), each one
 * schema in wire terms. The REST row validates its body with it and the GraphQL resolver parses its
 * input with it (GraphQL's input types are derived from these shapes: camelCase names, the
 * `describe` texts), so a new run option is one line here plus its test. Limits and wording follow
 * OpenAI's; the rules that need stored data (a forced tool among the run's tools) are `checkToolChoice`.
 */
import { z } from 'zod';
import { invalidInput } from '../../errors.js';
import { decimal, integer, list, oneOf, refuse, stringPairs, text, withoutNulls } from '../../lib/contract.js';
import type { TextContent } from './message.entity.js';

export const MAX_TOOLS = 20;
export const MIN_TOKEN_LIMIT = 256;
export const MAX_INSTRUCTIONS = 256_000;
export const MAX_MESSAGE_LENGTH = 256_000;
export const MAX_ADDITIONAL_MESSAGES = 32;
export const MAX_THREAD_MESSAGES = 100;

const metadata = stringPairs({ pairs: 16, keyMax: 64, valueMax: 512 });
const jsonObject = z.record(z.unknown());

const functionDefinition = z
  .object({
    name: text({ pattern: /^[a-zA-Z0-9_-]{1,64}$/ }),
    description: text({ allowEmpty: true, max: 1024 }).nullish(),
    parameters: jsonObject.nullish(),
    strict: z.boolean().nullish(),
  })
  .transform(withoutNulls);

const tool = z.discriminatedUnion('type', [
  z.object({ type: z.literal('code_interpreter') }),
  z.object({ type: z.literal('file_search'), file_search: jsonObject.optional() }),
  z.object({ type: z.literal('function'), function: functionDefinition }),
]);

/** At most 20 tools; function names well-formed and unique. */
const tools = list(tool, { max: MAX_TOOLS }).superRefine((value, ctx) => {
  const seen = new Set<string>();
  value.forEach((t, i) => {
    if (t.type !== 'function') return;
    if (seen.has(t.function.name)) {
      refuse(ctx, 'invalid_value', `duplicate function name '${t.function.name}'.`, [i, 'function', 'name']);
    }
    seen.add(t.function.name);
  });
});

const toolChoice = z.union([
  oneOf(['none', 'auto', 'required']),
  z.discriminatedUnion('type', [z.object({ type: z.literal('function'), function: z.object({ name: text() }) }), z.object({ type: z.literal('file_search') })]),
]);

const responseFormat = z.union([
  oneOf(['auto', 'none']),
  z.discriminatedUnion('type', [
    z.object({ type: z.literal('text') }),
    z.object({ type: z.literal('json_object') }),
    z.object({ type: z.literal('json_schema'), json_schema: z.object({ name: text({ max: 64 }) }).passthrough() }),
  ]),
]);

const truncationStrategy = z
  .discriminatedUnion('type', [
    z.object({
      type: z.literal('auto'),
      last_messages: z.unknown().superRefine((value, ctx) => {
        if (value !== undefined && value !== null) {
          refuse(ctx, 'invalid_value', "only allowed when 'truncation_strategy.type' is 'last_messages'.");
        }
      }),
    }),
    z.object({ type: z.literal('last_messages'), last_messages: integer({ min: 1 }) }),
  ])
  .transform((t): TruncationStrategy => (t.type === 'auto' ? { type: 'auto', last_messages: null } : { type: 'last_messages', last_messages: t.last_messages }));

export type Tool = z.output<typeof tool>;
export type FunctionDefinition = z.output<typeof functionDefinition>;
export type ToolChoice = z.output<typeof toolChoice>;
export type ResponseFormat = z.output<typeof responseFormat>;
export type TruncationStrategy = { type: 'auto'; last_messages: null } | { type: 'last_messages'; last_messages: number };

export function textPart(value: string): TextContent {
  return { type: 'text', text: { value, annotations: [] } };
}

const messageText = text({ max: MAX_MESSAGE_LENGTH });

/** A message's content: a non-empty string, or text parts (`{type: "text", text}`), stored as parts. */
const content = z
  .union([
    messageText,
    list(
      z.discriminatedUnion('type', [z.object({ type: z.literal('text'), text: z.union([messageText, z.object({ value: messageText })]) })]),
      { min: 1 },
    ),
  ])
  .transform((value): TextContent[] => (typeof value === 'string' ? [textPart(value)] : value.map((part) => textPart(typeof part.text === 'string' ? part.text : part.text.value))));

export const createMessageContract = z.object({
  role: oneOf(['user', 'assistant']).describe('`user` or `assistant` (required).'),
  content: content.describe('A string, or an array of `{type: "text", text}` parts (required).'),
  attachments: z.array(z.unknown()).nullish().describe('Attachments, kept as given.'),
  metadata: metadata.nullish().describe('Up to 16 string pairs.'),
});

const threadShape = {
  messages: list(createMessageContract, { max: MAX_THREAD_MESSAGES }).nullish().describe('Initial messages: `[{role, content, attachments?, metadata?}]`.'),
  metadata: metadata.nullish().describe('Up to 16 string pairs.'),
  tool_resources: jsonObject.nullish().describe('Tool resources.'),
};

export const createThreadContract = z.object(threadShape);

export const createAssistantContract = z.object({
  model: text({ max: 256 }).describe('Model name (required; the `local` provider accepts any).'),
  name: text({ max: 256, allowEmpty: true }).nullish().describe('Display name.'),
  description: text({ max: 512, allowEmpty: true }).nullish().describe('Free text.'),
  instructions: text({ max: MAX_INSTRUCTIONS, allowEmpty: true }).nullish().describe('System instructions.'),
  tools: tools.nullish().describe('At most 20 tool objects.'),
  tool_resources: jsonObject.nullish().describe('Tool resources.'),
  metadata: metadata.nullish().describe('Up to 16 string pairs (keys ≤ 64, values ≤ 512 characters).'),
  temperature: decimal(0, 2).nullish().describe('0–2.'),
  top_p: decimal(0, 1).nullish().describe('0–1.'),
  response_format: responseFormat.nullish().describe('`auto`, `{type: "text"}`, `{type: "json_object"}` or `{type: "json_schema", json_schema}`.'),
});

/**
 * Modifications: a key left out keeps its value, `null` resets it (to null, `[]`, `{}` or `auto`,
 * as on create). The model can be changed but not cleared.
 */
export const modifyAssistantContract = createAssistantContract.partial();

/** Messages and runs: only their metadata can change (unknown keys refused, as published). */
export const modifyMetadataContract = z
  .object({
    metadata: metadata.nullish().describe('Up to 16 string pairs; replaces the stored ones.'),
  })
  .strict();

/** Its published schema forbids unknown keys too (a misspelt key would otherwise change nothing silently). */
export const modifyThreadContract = modifyMetadataContract.extend({
  tool_resources: jsonObject.nullish().describe('Tool resources; replaces the stored ones.'),
});

/** What a run request may set; what it omits (null) comes from the assistant. */
const runOptions = {
  assistant_id: z.string().describe('The assistant (required).'),
  model: text({ max: 256 }).nullish().describe('Overrides the assistant’s model.'),
  instructions: text({ max: MAX_INSTRUCTIONS, allowEmpty: true }).nullish().describe('Overrides the assistant’s instructions.'),
  tools: tools.nullish().describe('Overrides the assistant’s tools (at most 20).'),
  metadata: metadata.nullish().describe('Up to 16 string pairs.'),
  temperature: decimal(0, 2).nullish().describe('0–2.'),
  top_p: decimal(0, 1).nullish().describe('0–1.'),
  max_prompt_tokens: integer({ min: MIN_TOKEN_LIMIT }).nullish().describe('≥ 256: prompt budget of each model call (older messages are dropped to fit).'),
  max_completion_tokens: integer({ min: MIN_TOKEN_LIMIT }).nullish().describe('≥ 256: completion budget of the whole run (then `incomplete`).'),
  truncation_strategy: truncationStrategy.nullish().describe('`{type: "auto"}` or `{type: "last_messages", last_messages: n}`.'),
  tool_choice: toolChoice.nullish().describe('`none`, `auto`, `required`, or `{type: "function", function: {name}}`.'),
  parallel_tool_calls: z.boolean().nullish().describe('Default true.'),
  response_format: responseFormat.nullish().describe('Overrides the assistant’s response format.'),
};

export const createRunContract = z.object({
  ...runOptions,
  additional_instructions: text({ max: MAX_INSTRUCTIONS, allowEmpty: true }).nullish().describe('Appended to the instructions for this run.'),
  additional_messages: list(createMessageContract, { max: MAX_ADDITIONAL_MESSAGES }).nullish().describe('Messages added to the thread before the run starts.'),
});

export const createThreadAndRunContract = z.object({
  ...runOptions,
  thread: createThreadContract.nullish().describe('The thread: `{messages?, metadata?, tool_resources?}`.'),
});

export const toolOutputContract = z
  .object({
    tool_call_id: z.string().describe('The call (from `requiredAction`).'),
    output: z.string().describe('What the tool returned.'),
  })
  .strict();

/** Its published schema forbids unknown keys. */
export const submitToolOutputsContract = z
  .object({ tool_outputs: z.array(toolOutputContract).describe('One output per pending call.') })
  .strict();

export type CreateAssistantInput = z.output<typeof createAssistantContract>;
export type CreateThreadInput = z.output<typeof createThreadContract>;
export type CreateMessageInput = z.output<typeof createMessageContract>;
export type CreateRunInput = z.output<typeof createRunContract>;
export type CreateThreadAndRunInput = z.output<typeof createThreadAndRunContract>;
export type SubmitToolOutputsInput = z.output<typeof submitToolOutputsContract>;
export type ModifyAssistantInput = z.output<typeof modifyAssistantContract>;
export type ModifyThreadInput = z.output<typeof modifyThreadContract>;
export type ModifyMetadataInput = z.output<typeof modifyMetadataContract>;
type RunOptionsInput = CreateRunInput | CreateThreadAndRunInput;

export interface AssistantDefaults {
  model: string;
  instructions: string | null;
  tools: Tool[];
  temperature: number | null;
  topP: number | null;
  responseFormat: ResponseFormat;
}

export interface RunOptions {
  model: string;
  instructions: string;
  tools: Tool[];
  metadata: Record<string, string>;
  temperature: number | null;
  topP: number | null;
  maxPromptTokens: number | null;
  maxCompletionTokens: number | null;
  truncationStrategy: TruncationStrategy;
  toolChoice: ToolChoice;
  parallelToolCalls: boolean;
  responseFormat: ResponseFormat;
}

/** A forced or required tool must be among the run's tools (which may be the assistant's). */
export function checkToolChoice(choice: ToolChoice, tools: readonly Tool[]): ToolChoice {
  if (choice === 'required' && tools.length === 0) throw invalidInput('tool_choice', "'required' needs at least one tool in 'tools'.");
  if (typeof choice === 'string') return choice;
  if (choice.type === 'file_search') {
    if (!tools.some((t) => t.type === 'file_search')) throw invalidInput('tool_choice', "the file_search tool is not among the run's tools.");
    return choice;
  }
  const name = choice.function.name;
  if (!tools.some((t) => t.type === 'function' && t.function.name === name)) {
    throw invalidInput('tool_choice.function.name', `no function named '${name}' among the run's tools.`);
  }
  return { type: 'function', function: { name } };
}

/** A run's settings: the request's parsed values over the assistant's. */
export function runOptionsOf(input: RunOptionsInput & { additional_instructions?: string | null }, assistant: AssistantDefaults): RunOptions {
  const base = input.instructions ?? assistant.instructions ?? '';
  const extra = input.additional_instructions;
  const runTools = input.tools ?? assistant.tools;
  return {
    model: input.model ?? assistant.model,
    instructions: extra ? (base ? `${base}\n\n${extra}` : extra) : base,
    tools: runTools,
    metadata: input.metadata ?? {},
    temperature: input.temperature ?? assistant.temperature,
    topP: input.top_p ?? assistant.topP,
    maxPromptTokens: input.max_prompt_tokens ?? null,
    maxCompletionTokens: input.max_completion_tokens ?? null,
    truncationStrategy: input.truncation_strategy ?? { type: 'auto', last_messages: null },
    toolChoice: checkToolChoice(input.tool_choice ?? 'auto', runTools),
    parallelToolCalls: input.parallel_tool_calls ?? true,
    responseFormat: input.response_format ?? assistant.responseFormat,
  };
}
