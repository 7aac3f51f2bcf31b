/**
 * Chat completions and embeddings through the gateway, under the same enforcement as runs:
 * API key → virtual key (404) → access enabled (403) → rate limit (429) → usage limits and
 * matching policies (412, an estimate reserved) → input guardrails (446 / 246) — all of it
 * `admitModelWork`'s — then the upstream, output guardrails on the answer, and the usage settled
 * from the upstream's own `usage` (counted with the tokenizer only when it gives none). Every
 * call, refused or not, leaves one request-log record.
 */
import { cachedHomeWorkspace } from '../../auth/tenancy.js';
import { AppError, GuardrailDeniedError } from '../../errors.js';
import { randomAlphanumeric } from '../../lib/ids.js';
import { refusalReason, settleAdmission } from '../enforcement/enforcement.service.js';
import { evaluateForRequest, guardrailDeniedError } from '../guardrails/evaluation.service.js';
import { guardrailVerdicts, logModelCall, refusalVerdicts, type ModelCallFacts } from '../request-log/model-call.js';
import { abandonAdmission, admitModelWork, type Admission, type Admitted, type ModelWorkContext, type ModelWorkKind } from '../runs/admission.js';
import { countTokensAsync } from '../runs/models/tokens.js';
import { checkChatBody, checkEmbeddingsBody, metadataOf, promptTexts, routingOf, type WireBody } from './chat-request.js';
import { ChunkStream, registerStream } from './chat-streams.js';
import { ChunkAccumulator, completionText, usageOf, type Usage } from './chunks.js';
import type { ProviderCall } from './provider.js';
import { providerFor } from './providers.js';

export interface ChatCompletionResult {
  /** The non-streamed `chat.completion`; null for a stream. */
  completion: WireBody | null;
  /** For `stream: true`: the id the `chatCompletionChunks` subscription reads the chunks by. */
  streamId: string | null;
}

/** A request's context: `startedAt` (its arrival) times the request log's total latency. */
type ChatContext = ModelWorkContext & { startedAt?: number };

interface Prepared {
  admission: Admission;
  log: ModelCallFacts;
  call: ProviderCall;
}

/** `route` names the front door in the request log: a prompt's completions are chat completions too. */
export async function createChatCompletion(
  ctx: ChatContext,
  body: WireBody,
  virtualKey?: string | null,
  route: 'chat.completions' | 'prompts.completions' = 'chat.completions',
): Promise<Admitted<ChatCompletionResult>> {
  const checked = checkChatBody(body);
  const texts = promptTexts(checked.messages);
  const prepared = await admit(ctx, 'chat_completion', body, virtualKey, {
    route,
    stream: checked.stream,
    inputText: texts.join('\n'),
    maxCompletionTokens: checked.maxCompletionTokens,
  });
  const { admission } = prepared;
  const provider = providerFor(admission.provider, ctx.runtime);
  const countPrompt = () => countAllTokens(texts);
  const upstreamStart = performance.now();

  if (!checked.stream) {
    let completion: WireBody;
    try {
      completion = await provider.complete(prepared.call);
    } catch (error) {
      await failed(ctx, prepared, error, performance.now() - upstreamStart);
      throw error;
    }
    const upstreamMs = performance.now() - upstreamStart;
    const text = completionText(completion);
    const usage = usageOf(completion.usage) ?? (await counted(await countPrompt(), text));
    await finish(ctx, prepared, usage, upstreamMs, text, { deny: true });
    return { value: { completion, streamId: null }, answer: answerOf(ctx, admission, upstreamMs) };
  }

  let source: AsyncIterable<WireBody>;
  try {
    source = await provider.stream(prepared.call);
  } catch (error) {
    await failed(ctx, prepared, error, performance.now() - upstreamStart);
    throw error;
  }
  const streamId = `chatstream_${randomAlphanumeric(24)}`;
  const stream = new ChunkStream(ctx.principal.apiKeyId);
  registerStream(ctx.runtime, streamId, stream);
  const answer = answerOf(ctx, admission, performance.now() - upstreamStart);
  void pump(ctx, prepared, source, stream, checked.includeUsage, countPrompt, upstreamStart);
  return { value: { completion: null, streamId }, answer };
}

/**
 * Reads the upstream to its end (whether or not anyone still reads the stream), then settles,
 * checks the whole answer against the output guardrails (recorded, never blocking) and logs.
 */
async function pump(
  ctx: ChatContext,
  prepared: Prepared,
  source: AsyncIterable<WireBody>,
  stream: ChunkStream,
  includeUsage: boolean,
  countPrompt: () => Promise<number>,
  upstreamStart: number,
): Promise<void> {
  const answer = new ChunkAccumulator();
  try {
    for await (const chunk of source) {
      answer.add(chunk);
      const usageOnly = Array.isArray(chunk.choices) && chunk.choices.length === 0 && chunk.usage;
      // The gateway always asks for usage; a caller who did not gets none of it.
      if (includeUsage) stream.push(chunk);
      else if (!usageOnly) {
        const { usage: _usage, ...rest } = chunk;
        stream.push(rest);
      }
    }
  } catch (error) {
    stream.fail(error);
    const usage = answer.usage ?? (await counted(await countPrompt(), answer.text()));
    await settleAdmission(ctx.runtime, prepared.admission, usage);
    logModelCall(ctx.runtime, prepared.log, { status: statusOf(error), usage, upstreamMs: performance.now() - upstreamStart, guardrails: [], refusal: reasonOf(error) });
    return;
  }
  stream.end();
  const text = answer.text();
  await finish(ctx, prepared, answer.usage ?? (await counted(await countPrompt(), text)), performance.now() - upstreamStart, text, { deny: false }).catch((error: unknown) =>
    ctx.runtime.logger.error({ err: error }, 'could not finish a streamed chat completion'),
  );
}

export async function createEmbeddings(ctx: ChatContext, body: WireBody, virtualKey?: string | null): Promise<Admitted<WireBody>> {
  const inputs = checkEmbeddingsBody(body);
  const prepared = await admit(ctx, 'embeddings', body, virtualKey, {
    route: 'embeddings',
    stream: false,
    inputText: inputs.join('\n'),
    maxCompletionTokens: null,
  });
  const provider = providerFor(prepared.admission.provider, ctx.runtime);
  const upstreamStart = performance.now();
  let result: WireBody;
  try {
    result = await provider.embed(prepared.call, inputs);
  } catch (error) {
    await failed(ctx, prepared, error, performance.now() - upstreamStart);
    throw error;
  }
  const usage = usageOf(result.usage) ?? (await counted(await countAllTokens(inputs), ''));
  const upstreamMs = performance.now() - upstreamStart;
  await finish(ctx, prepared, usage, upstreamMs, null, { deny: false });
  return { value: result, answer: answerOf(ctx, prepared.admission, upstreamMs) };
}

// ---------------------------------------------------------------------------------------------

/**
 * The admission's answer with the gateway's own time (`x-gateway-overhead-ms` for model traffic):
 * from the request's arrival to its answer (for a stream, to the stream's start), without the
 * time the provider took.
 */
function answerOf(ctx: ChatContext, admission: Admission, upstreamMs: number): Admitted<unknown>['answer'] {
  if (ctx.startedAt === undefined) return admission.answer;
  const ms = Math.max(0, performance.now() - ctx.startedAt - upstreamMs);
  ctx.runtime.metrics.overhead.observe(ms / 1000);
  // Not `{ ...admission.answer, ownTimeMs }` (CONTRIBUTING: objects made per request).
  return Object.assign({}, admission.answer, { ownTimeMs: ms });
}

/** Counted only when the upstream reports no usage; large texts never hold the event loop. */
async function counted(prompt: number, completionText: string): Promise<Usage> {
  const completion = await countTokensAsync(completionText);
  return { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion };
}

async function countAllTokens(texts: readonly string[]): Promise<number> {
  let total = 0;
  for (const text of texts) total += await countTokensAsync(text);
  return total;
}

/** Routing, metadata, workspace and admission; a refusal is logged and thrown. */
async function admit(
  ctx: ChatContext,
  kind: ModelWorkKind,
  body: WireBody,
  virtualKey: string | null | undefined,
  request: { route: ModelCallFacts['route']; stream: boolean; inputText: string; maxCompletionTokens: number | null },
): Promise<Prepared> {
  const routing = routingOf(body.model, virtualKey, ctx.caller);
  const metadata = metadataOf(body.metadata, ctx.caller);
  const workspace = await cachedHomeWorkspace(ctx.em, ctx.runtime, ctx.principal);
  const log: Prepared['log'] = {
    organisationId: workspace.organisationId,
    workspaceId: workspace.id,
    apiKeyId: ctx.principal.apiKeyId,
    virtualKey: routing.virtualKey,
    provider: null,
    model: routing.model,
    route: request.route,
    stream: request.stream,
    startedAt: ctx.startedAt ?? performance.now(),
    requestId: ctx.requestId ?? null,
    metadata,
  };
  let admission: Admission;
  try {
    admission = await admitModelWork(ctx, {
      kind,
      organisationId: workspace.organisationId,
      workspaceId: workspace.id,
      virtualKey: routing.virtualKey,
      model: routing.model,
      inputText: request.inputText,
      metadata,
      apiKeyId: ctx.principal.apiKeyId,
      threadId: null,
      runId: null,
      maxCompletionTokens: request.maxCompletionTokens,
    });
  } catch (error) {
    logModelCall(ctx.runtime, log, { status: statusOf(error), usage: null, upstreamMs: null, guardrails: refusalVerdicts(error), refusal: refusalReason(error) });
    throw error;
  }
  log.provider = admission.provider.integration.aiProviderId;
  log.prices = admission.provider.integration.prices;
  return {
    admission,
    log,
    call: { body, model: routing.model, maxCompletionTokens: request.maxCompletionTokens, signal: ctx.runtime.shutdown },
  };
}

/** The upstream failed before answering: nothing was used, so the reservation goes back. */
async function failed(ctx: ChatContext, prepared: Prepared, error: unknown, upstreamMs: number): Promise<void> {
  await abandonAdmission(ctx, prepared.admission, error);
  logModelCall(ctx.runtime, prepared.log, { status: statusOf(error), usage: null, upstreamMs, guardrails: [], refusal: reasonOf(error) });
}

/**
 * Settles the usage, then checks the answer (when there is one) against the output guardrails:
 * with `deny`, a denying guardrail answers 446; otherwise the verdict is only recorded.
 */
async function finish(ctx: ChatContext, prepared: Prepared, usage: Usage, upstreamMs: number, text: string | null, options: { deny: boolean }): Promise<void> {
  const { admission, log } = prepared;
  const settled = await settleAdmission(ctx.runtime, admission, usage);
  const guardrails = settled?.inputGuardrails ? guardrailVerdicts('input', settled.inputGuardrails.results) : [];
  let status = settled?.decision.status ?? 200;
  let refusal: string | null = null;
  let denied: GuardrailDeniedError | null = null;
  const refs = admission.provider.provider.outputGuardrails;
  if (text !== null && refs.length > 0) {
    const evaluation = await evaluateForRequest(ctx.runtime, {
      organisationId: admission.request.organisationId,
      workspaceId: admission.request.workspaceId,
      guardrailRefs: refs,
      stage: 'output',
      context: { text, model: admission.request.model, metadata: admission.request.metadata, headers: {} },
      requestId: ctx.requestId ?? null,
      em: ctx.em,
    });
    void evaluation.runAsync();
    guardrails.push(...guardrailVerdicts('output', evaluation.results));
    if (evaluation.deny && options.deny) {
      ctx.runtime.metrics.refusals.inc({ reason: 'output_guardrail' });
      denied = guardrailDeniedError(evaluation, 'answer');
      status = denied.status;
      refusal = 'output_guardrail';
    }
  }
  logModelCall(ctx.runtime, log, { status, usage, upstreamMs, guardrails, refusal });
  if (denied) throw denied;
}

function statusOf(error: unknown): number {
  return error instanceof AppError ? error.status : 500;
}

function reasonOf(error: unknown): string {
  return error instanceof AppError && error.code ? error.code : 'error';
}
