import type { RequestContext } from '../context.js';

/**
 * Work a service deferred until its answer is ready (such as writing the request log), started
 * once the response is; a failure is logged, never turned into the answer.
 */
export function startAfterResponse(context: RequestContext): void {
  for (const task of context.afterResponse.splice(0)) {
    task().catch((error: unknown) => context.log.error({ err: error }, 'after-response task failed'));
  }
}
