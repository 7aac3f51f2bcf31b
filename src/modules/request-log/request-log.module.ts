import { AppError } from '../../errors.js';
import { refusalReason } from '../enforcement/enforcement.service.js';
import type { DomainModule } from '../module.js';
import { runHooks } from '../runs/admission.js';
import { logModelCall, refusalVerdicts } from './model-call.js';
import { RequestLogSchema } from './request-log.entity.js';
import { requestLogWriter } from './request-log.writer.js';

/**
 * The request log (request-log.writer.ts): its table, a record for each model call inside a run
 * and for each refused run request (chat completions and embeddings log their own), and the last
 * batch written on stop.
 */
export const requestLogModule: DomainModule = {
  name: 'request-log',
  entities: [RequestLogSchema],
  start(runtime) {
    requestLogWriter(runtime);
    runtime.singleton('requestLog.runHooks', () => [
      // A refused run request made no model call, but the log shows refusals too. Chat completions
      // and embeddings log their own (with what they know beyond the admission).
      runHooks(runtime).addAdmissionListener({
        refused: (ctx, request, error) => {
          if (request.kind === 'chat_completion' || request.kind === 'embeddings') return;
          logModelCall(
            ctx.runtime,
            {
              organisationId: request.organisationId,
              workspaceId: request.workspaceId,
              apiKeyId: request.apiKeyId,
              virtualKey: request.virtualKey,
              provider: null,
              model: request.model,
              route: 'runs',
              stream: false,
              startedAt: (ctx as { startedAt?: number }).startedAt ?? performance.now(),
              requestId: ctx.requestId ?? null,
              runId: request.runId,
              metadata: request.metadata,
            },
            { status: error instanceof AppError ? error.status : 500, usage: null, upstreamMs: null, guardrails: refusalVerdicts(error), refusal: refusalReason(error) },
          );
        },
      }),
      runHooks(runtime).addModelCallListener((rt, { run, provider, usage, upstreamMs, failure }) =>
        logModelCall(
          rt,
          {
            organisationId: run.organisationId,
            workspaceId: run.workspaceId,
            apiKeyId: run.apiKeyId,
            virtualKey: run.virtualKey,
            provider: provider.integration.aiProviderId,
            model: run.model,
            route: 'runs',
            stream: true,
            prices: provider.integration.prices,
            startedAt: performance.now() - upstreamMs,
            requestId: null,
            runId: run.id,
            metadata: run.metadata,
          },
          { status: failure?.status ?? 200, usage, upstreamMs, guardrails: [], refusal: failure?.code ?? null },
        ),
      ),
    ]);
  },
  async stop(runtime) {
    await requestLogWriter(runtime).flush();
  },
};
