import type { Plugin } from 'graphql-yoga';
import { AuthenticationError } from '../errors.js';
import type { Runtime } from '../runtime.js';
import { appErrorResponse } from './error-response.js';
import { recordRoute } from './route-label.js';

const json = (status: number, body: unknown) =>
  new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json; charset=utf-8' } });

/** Liveness, readiness and metrics: answered without an API key (metrics: unless METRICS_TOKEN is set). */
async function opsResponse(runtime: Runtime, request: Request, pathname: string): Promise<Response | undefined> {
  if (pathname === '/healthz') return json(200, { status: 'ok' });
  if (pathname === '/readyz') {
    try {
      await runtime.fork().getConnection().execute('select 1');
      return json(200, { status: 'ok', database: 'ok' });
    } catch (error) {
      runtime.logger.warn({ err: error }, 'readiness check failed');
      return json(503, { status: 'unavailable', database: 'unreachable' });
    }
  }
  if (pathname === '/metrics') {
    const token = runtime.config.METRICS_TOKEN;
    if (token && request.headers.get('authorization') !== `Bearer ${token}`) {
      return appErrorResponse(new AuthenticationError('Metrics need Authorization: Bearer <METRICS_TOKEN>.', { code: 'invalid_metrics_token' }));
    }
    return new Response(await runtime.metrics.registry.metrics(), {
      status: 200,
      headers: { 'content-type': runtime.metrics.registry.contentType },
    });
  }
  return undefined;
}

/** Answers the operations endpoints before anything else (no authentication, no body). */
export function opsPlugin(runtime: Runtime): Plugin {
  return {
    async onRequest({ request, url, endResponse }) {
      const ops = await opsResponse(runtime, request, url.pathname);
      if (!ops) return;
      recordRoute(request, url.pathname);
      endResponse(ops);
    },
  };
}
