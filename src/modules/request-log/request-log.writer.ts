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

/** Latencies kept for one provider and model before they are put into the histogram anyway. */
const PENDING_LIMIT = 1_000;

interface Pending {
  provider: string;
  model: string;
  prompt: number;
  completion: number;
  cost: number;
  latencies: number[];
}

export class RequestLogWriter {
  private readonly inserts: BatchedInserts<RequestLog>;
  private readonly models = new Set<string>();
  /**
   * Records written since the last turn of the event loop: counted on /metrics and queued for the
   * database once that turn is over, so the answer whose service wrote them (in the same turn) is
   * not kept waiting for the metrics' label hashing.
   */
  private arrived: RequestLog[] = [];
  /**
   * What the records counted since /metrics was last read add, by provider and model label: put
   * into the prom-client metrics when they are read (their `collect`), or once a label pair holds
   * PENDING_LIMIT latencies. prom-client hashes a record's labels again for each of its four
   * figures; this is one map lookup a record.
   */
  private readonly pending = new Map<string, Pending>();
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
    const collect = () => this.applyPending();
    this.dropped = new Counter({ name: 'gatehouse_request_log_dropped_total', help: 'Request-log records dropped (buffer full, or a batch that could not be written).', labelNames: ['reason'], registers });
    this.tokens = new Counter({ name: 'gatehouse_model_tokens_total', help: 'Tokens of model calls by provider, model and kind (prompt, completion).', labelNames: ['provider', 'model', 'kind'], registers, collect });
    this.cost = new Counter({ name: 'gatehouse_model_cost_dollars_total', help: 'US dollars of model calls by provider and model.', labelNames: ['provider', 'model'], registers, collect });
    this.upstreamLatency = new Histogram({
      name: 'gatehouse_upstream_latency_seconds',
      help: 'Time the model provider took to answer a model call, by provider and model.',
      labelNames: ['provider', 'model'],
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
      registers,
      collect,
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
    const model = this.modelLabel(record.model);
    const key = `${record.provider}\n${model}`;
    let entry = this.pending.get(key);
    if (!entry) this.pending.set(key, (entry = { provider: record.provider, model, prompt: 0, completion: 0, cost: 0, latencies: [] }));
    entry.prompt += record.promptTokens || 0;
    entry.completion += record.completionTokens || 0;
    entry.cost += record.cost || 0;
    if (record.upstreamMs !== null && record.upstreamMs !== undefined) {
      entry.latencies.push(record.upstreamMs / 1000);
      if (entry.latencies.length >= PENDING_LIMIT) this.apply(entry);
    }
  }

  /** Everything counted since the last call, into the prom-client metrics. */
  private applyPending(): void {
    for (const entry of this.pending.values()) this.apply(entry);
  }

  private apply(entry: Pending): void {
    const labels = { provider: entry.provider, model: entry.model };
    if (entry.prompt) this.tokens.inc({ ...labels, kind: 'prompt' }, entry.prompt);
    if (entry.completion) this.tokens.inc({ ...labels, kind: 'completion' }, entry.completion);
    if (entry.cost) this.cost.inc(labels, entry.cost);
    for (const seconds of entry.latencies) this.upstreamLatency.observe(labels, seconds);
    entry.prompt = entry.completion = entry.cost = 0;
    entry.latencies.length = 0;
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
