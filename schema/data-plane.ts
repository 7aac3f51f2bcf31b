import type { RequestContext } from '../src/context.js';
import { markDataPlane, OVERHEAD_HEADER } from '../src/http/data-plane.js';
import type { Admitted } from '../src/modules/runs/admission.js';

/**
 * Resolves a field that makes a model work. The request is data-plane (its response carries
 * x-gateway-overhead-ms, refusals included), and what the admission decided about the answer
 * (x-ratelimit-*, status 246, the gateway's own time) goes onto the response here, at the edge:
 * services return it and never touch the HTTP response.
 */
export async function dataPlane<T>(ctx: RequestContext, work: () => Promise<Admitted<T>>): Promise<T> {
  markDataPlane(ctx.request);
  const { value, answer } = await work();
  Object.assign(ctx.response.headers, answer.headers);
  if (answer.status !== 200) ctx.response.status = answer.status;
  if (answer.ownTimeMs !== undefined) ctx.response.headers[OVERHEAD_HEADER] = answer.ownTimeMs.toFixed(3);
  return value;
}
