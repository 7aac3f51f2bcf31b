import type { DomainModule } from '../module.js';
import { runHooks } from '../runs/admission.js';
import { logModelCall } from './model-call.js';
import { RequestLogSchema } from './request-log.entity.js';
import { requestLogWriter } from './request-log.writer.js';

/**
 * The request log (request-log.writer.ts): its table, a record for each model call inside a run
 * (chat completions and embeddings log their own), and the last batch written on stop.
 */
export const requestLogModule: DomainModule = {
  name: 'request-log',
  entities: [RequestLogSchema],
  start(runtime) {
    requestLogWriter(runtime);
    runtime.singleton('requestLog.runHooks', () =>
      runHooks(runtime).addModelCallListener((rt, { run, provider, usage, upstreamMs }) =>
        logModelCall(rt, {
          organisationId: run.organisationId,
          workspaceId: run.workspaceId,
          apiKeyId: run.apiKeyId,
          virtualKey: run.virtualKey,
          provider: provider.integration.aiProviderId,
          model: run.model,
          route: 'runs',
          status: 200,
          stream: true,
          usage,
          prices: provider.integration.prices,
          startedAt: performance.now() - upstreamMs,
          upstreamMs,
          requestId: null,
          runId: run.id,
          metadata: run.metadata,
          guardrails: [],
          refusal: null,
        }),
      ),
    );
  },
  async stop(runtime) {
    await requestLogWriter(runtime).flush();
  },
};
