/**
 * The request log's writer: records queue in a bounded buffer and are inserted in batches by a
 * timer (src/db/batched-inserts.ts), so writing the log never slows or fails a request. A full
 * buffer drops the new record and counts it (`gatehouse_request_log_dropped_total`); a failed
 * batch is logged and counted the same way, never retried into an unbounded backlog.
 */
import { Counter, Histogram, type Registry } from 'prom-client';
import { BatchedInserts } from '../../db/batched-inserts.js';
import type { Runtime } from '../../runtime.js';
import { RequestLogSchema, type RequestLog } from './request-log.entity.js';

export const BUFFER_LIMIT = 10_000;
/** Distinct model labels on /metrics; later models count as `other` (bounded label sets). */
const MODEL_LABEL_LIMIT = 100;

export class RequestLogWriter {
  private readonly inserts: BatchedInserts<RequestLog>;
  private readonly models = new Set<string>();
  /**
   * Records written since the last turn of the event loop: counted on /metrics and queued for the
   * database once that turn is over, so the answer whose service wrote them (in the same turn) is
   * not kept waiting for the metrics' label hashing.
   */
  private arrived: RequestLog[] = [];
  private taking: ReturnType<typeof setImmediate> | null = null;
  readonly dropped: Counter<'reason'>;
  readonly tokens: Counter<'provider' | 'model' | 'kind'>;
  readonly cost: Counter<'provider' | 'model'>;
  readonly upstreamLatency: Histogram<'provider' | 'model'>;

  constructor(
    runtime: Runtime,
    private readonly limit = BUFFER_LIMIT,
    registry: Registry = runtime.metrics.registry,
  ) {
    const registers = [registry];
    this.dropped = new Counter({ name: 'gatehouse_request_log_dropped_total', help: 'Request-log records dropped (buffer full, or a batch that could not be written).', labelNames: ['reason'], registers });
    this.tokens = new Counter({ name: 'gatehouse_model_tokens_total', help: 'Tokens of model calls by provider, model and kind (prompt, completion).', labelNames: ['provider', 'model', 'kind'], registers });
    this.cost = new Counter({ name: 'gatehouse_model_cost_dollars_total', help: 'US dollars of model calls by provider and model.', labelNames: ['provider', 'model'], registers });
    this.upstreamLatency = new Histogram({
      name: 'gatehouse_upstream_latency_seconds',
      help: 'Time the model provider took to answer a model call, by provider and model.',
      labelNames: ['provider', 'model'],
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
      registers,
    });
    this.inserts = new BatchedInserts<RequestLog>(runtime, RequestLogSchema, (error, batch) => {
      this.dropped.inc({ reason: 'write_failed' }, batch.length);
      runtime.logger.error({ err: error, records: batch.length }, 'could not write request-log records');
    });
  }

  /** Queues one record (never waits, never throws). Its metrics are counted after the current turn (`take`). */
  write(record: RequestLog): void {
    if (this.inserts.size + this.arrived.length >= this.limit) {
      this.observe(record);
      this.dropped.inc({ reason: 'buffer_full' });
      return;
    }
    this.arrived.push(record);
    this.taking ??= setImmediate(() => this.take());
  }

  /** Writes everything queued so far; resolves when it is in the database (or counted as dropped). */
  flush(): Promise<void> {
    this.take();
    return this.inserts.flush();
  }

  private take(): void {
    if (this.taking) clearImmediate(this.taking);
    this.taking = null;
    const records = this.arrived;
    this.arrived = [];
    for (const record of records) {
      this.observe(record);
      this.inserts.push(record);
    }
  }

  private observe(record: RequestLog): void {
    if (!record.provider || !record.model) return;
    const labels = { provider: record.provider, model: this.modelLabel(record.model) };
    if (record.promptTokens) this.tokens.inc({ ...labels, kind: 'prompt' }, record.promptTokens);
    if (record.completionTokens) this.tokens.inc({ ...labels, kind: 'completion' }, record.completionTokens);
    if (record.cost) this.cost.inc(labels, record.cost);
    if (record.upstreamMs !== null && record.upstreamMs !== undefined) this.upstreamLatency.observe(labels, record.upstreamMs / 1000);
  }

  private modelLabel(model: string): string {
    if (this.models.has(model)) return model;
    if (this.models.size >= MODEL_LABEL_LIMIT) return 'other';
    this.models.add(model);
    return model;
  }
}

export function requestLogWriter(runtime: Runtime): RequestLogWriter {
  return runtime.singleton('requestLog.writer', () => new RequestLogWriter(runtime));
}
