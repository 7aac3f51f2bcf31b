import { Counter, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

/** One registry per app, so several apps in one process (tests) never share counters. */
export class Metrics {
  readonly registry = new Registry();
  readonly httpRequests = new Counter({
    name: 'gatehouse_http_requests_total',
    help: 'HTTP requests answered, by route template (unknown for paths nobody serves), method and status.',
    labelNames: ['route', 'method', 'status'] as const,
    registers: [this.registry],
  });
  readonly httpDuration = new Histogram({
    name: 'gatehouse_http_request_duration_seconds',
    help: 'HTTP request latency in seconds, from arrival to response headers, by route template, method and status.',
    labelNames: ['route', 'method', 'status'] as const,
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [this.registry],
  });

  readonly refusals = new Counter({
    name: 'gatehouse_dataplane_refusals_total',
    help: 'Data-plane requests refused, by reason: virtual_key, integration_disabled, rate_limit, usage_limit, guardrail, output_guardrail, or the error code (e.g. model_price_unknown), else error.',
    labelNames: ['reason'] as const,
    registers: [this.registry],
  });
  readonly overhead = new Histogram({
    name: 'gatehouse_dataplane_overhead_seconds',
    help: 'Seconds a data-plane request spends in the gateway itself, excluding the wait for the model.',
    buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1],
    registers: [this.registry],
  });

  constructor(options: { processMetrics?: boolean } = {}) {
    if (options.processMetrics) collectDefaultMetrics({ register: this.registry, prefix: 'gatehouse_' });
  }

  observeRequest(route: string, method: string, status: number, seconds: number): void {
    const labels = { route, method, status: String(status) };
    this.httpRequests.inc(labels);
    this.httpDuration.observe(labels, seconds);
  }
}
