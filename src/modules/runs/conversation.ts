/**
 * What the model reads for a run: the instructions, the thread's messages and the run's finished
 * tool rounds, in the order they happened, cut by `truncation_strategy` and `max_prompt_tokens`.
 * Pure: rows in, chat messages out (async only because token counting yields to the event loop).
 */
import type { ChatMessage, FunctionTool, ToolChoice as ModelToolChoice } from './models/model.js';
import { countPromptTokens } from './models/tokens.js';
import type { Tool, ToolChoice, TruncationStrategy } from './runs.contract.js';

export interface ConversationMessage {
  ordinal: number;
  role: 'user' | 'assistant';
  text: string;
}

export interface ConversationToolRound {
  ordinal: number;
  calls: { id: string; name: string; arguments: string; output: string }[];
}

export interface ConversationInput {
  instructions: string;
  messages: ConversationMessage[];
  toolRounds: ConversationToolRound[];
  truncation: TruncationStrategy;
  maxPromptTokens: number | null;
}

export type Conversation = { ok: true; messages: ChatMessage[] } | { ok: false; reason: 'max_prompt_tokens' };

/**
 * `last_messages: n` keeps the thread's last n messages (and the tool rounds after the first of
 * them). `max_prompt_tokens` then drops the oldest messages or whole tool rounds (a call is never
 * separated from its output) until the prompt fits; if even the newest one alone does not fit,
 * the run cannot start: `max_prompt_tokens`.
 */
export async function buildConversation(input: ConversationInput): Promise<Conversation> {
  let messages = [...input.messages].sort((a, b) => a.ordinal - b.ordinal);
  if (input.truncation.type === 'last_messages') messages = messages.slice(-input.truncation.last_messages);
  const from = messages.length > 0 ? messages[0].ordinal : -Infinity;
  const rounds = input.toolRounds.filter((r) => r.ordinal >= from);

  type Unit = { ordinal: number; chat: ChatMessage[] };
  const units: Unit[] = [
    ...messages.map((m) => ({ ordinal: m.ordinal, chat: [{ role: m.role, content: m.text } as ChatMessage] })),
    ...rounds.map((r) => ({
      ordinal: r.ordinal,
      chat: [
        { role: 'assistant', content: '', tool_calls: r.calls.map(({ id, name, arguments: args }) => ({ id, name, arguments: args })) } as ChatMessage,
        ...r.calls.map((c) => ({ role: 'tool', content: c.output, tool_call_id: c.id }) as ChatMessage),
      ],
    })),
  ].sort((a, b) => a.ordinal - b.ordinal);

  const system: ChatMessage[] = input.instructions ? [{ role: 'system', content: input.instructions }] : [];
  const flatten = (list: Unit[]) => [...system, ...list.flatMap((u) => u.chat)];
  if (input.maxPromptTokens !== null) {
    // Each unit is counted once (counting is the costly part), then the oldest go until it fits.
    const unitTokens: number[] = [];
    for (const unit of units) unitTokens.push(await countPromptTokens(unit.chat));
    let total = (await countPromptTokens(system)) + unitTokens.reduce((sum, n) => sum + n, 0);
    while (units.length > 0 && total > input.maxPromptTokens) {
      if (units.length === 1) return { ok: false, reason: 'max_prompt_tokens' };
      units.shift();
      total -= unitTokens.shift()!;
    }
    if (total > input.maxPromptTokens) return { ok: false, reason: 'max_prompt_tokens' };
  }
  return { ok: true, messages: flatten(units) };
}

/** Function tools in the model's terms (other tool types have no model-side meaning here). */
export function functionTools(tools: readonly Tool[]): FunctionTool[] {
  return tools.flatMap((tool) =>
    tool.type === 'function'
      ? [{ name: tool.function.name, ...(tool.function.description !== undefined && { description: tool.function.description }), ...(tool.function.parameters !== undefined && { parameters: tool.function.parameters }) }]
      : [],
  );
}

/** A forced file_search has no function to call: the model chooses freely. */
export function modelToolChoice(choice: ToolChoice): ModelToolChoice {
  if (typeof choice === 'object' && choice.type === 'file_search') return 'auto';
  return choice as ModelToolChoice;
}
