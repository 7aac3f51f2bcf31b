/**
 * Using a prompt: render fills its template and gives the chat-completion request it makes;
 * completions sends that request through the chat-completions path, with all of chat's enforcement
 * (virtual key, access, rate limit, usage limits and policies, guardrails, request log, where they
 * are logged as `prompts.completions`).
 */
import type { ServiceContext } from '../../context.js';
import { createChatCompletion, type ChatCompletionResult } from '../chat/chat.service.js';
import type { Admitted, ModelWorkContext } from '../runs/admission.js';
import { renderMessages } from './prompt-template.js';
import type { PromptVersion } from './prompt-version.entity.js';
import { TOOL_CHOICES, type RenderPromptInput } from './prompts.contract.js';
import { defaultVersion, findPrompt, requireActive } from './prompts.service.js';

export type ChatRequest = Record<string, unknown>;

/**
 * The request: the stored parameters, then the prompt's model, functions, tools and tool choice,
 * then the caller's hyperparameters (which override them), and the template's messages followed by
 * the caller's `messages`.
 */
function requestOf(prompt: PromptVersion, input: RenderPromptInput): ChatRequest {
  const { variables, prompt_id: _promptId, messages: extra, stream, ...hyperparameters } = input;
  const stored: ChatRequest = { ...prompt.parameters, model: prompt.model };
  if (prompt.functions) stored.functions = prompt.functions;
  if (prompt.tools) stored.tools = prompt.tools;
  if (prompt.toolChoice) stored.tool_choice = chatToolChoice(prompt.toolChoice);
  const request: ChatRequest = { ...stored, ...hyperparameters, messages: [...renderMessages(prompt.template, variables), ...(extra ?? [])] };
  if (stream != null) request.stream = stream;
  return request;
}

/** The chat request's form of a stored tool choice: `{type: "auto"}` (the prompt's form) is `"auto"`. */
function chatToolChoice(choice: NonNullable<PromptVersion['toolChoice']>): unknown {
  return typeof choice === 'object' && Object.keys(choice).length === 1 && TOOL_CHOICES.includes(choice.type as never) ? choice.type : choice;
}

/** An active prompt's default version: what it is used at. */
async function usablePrompt(ctx: ServiceContext, idOrSlug: string): Promise<PromptVersion> {
  const prompt = await findPrompt(ctx.em, ctx.principal, idOrSlug);
  requireActive(prompt, 'used');
  return defaultVersion(ctx.em, prompt);
}

/** The chat-completion request the prompt makes with these variables (nothing is sent). */
export async function renderPrompt(ctx: ServiceContext, idOrSlug: string, input: RenderPromptInput): Promise<ChatRequest> {
  return requestOf(await usablePrompt(ctx, idOrSlug), input);
}

/**
 * A chat completion of the rendered prompt. The virtual key: `virtualKey` (GraphQL's argument),
 * else the version's own, else what chat reads (the model's `@<virtual-key>/` prefix, the header).
 */
export async function createPromptCompletion(
  ctx: ModelWorkContext,
  idOrSlug: string,
  input: RenderPromptInput,
  virtualKey?: string | null,
): Promise<Admitted<ChatCompletionResult>> {
  const prompt = await usablePrompt(ctx, idOrSlug);
  return createChatCompletion(ctx, requestOf(prompt, input), virtualKey || prompt.virtualKey, 'prompts.completions');
}
