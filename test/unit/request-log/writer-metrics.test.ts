/**
 * The request log's writer counts each record's tokens, cost and upstream latency on /metrics by
 * provider and model. It gathers them per label pair and puts them into the prom-client metrics
 * when those are read: every figure must be there at each read, each record counted once.
 */
import { Registry } from 'prom-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RequestLog } from '../../../src/modules/request-log/request-log.entity.js';
import { RequestLogWriter } from '../../../src/modules/request-log/request-log.writer.js';
import { createTestApp, type TestApp } from '../../helpers/app.js';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

const record = (model: string, promptTokens: number, completionTokens: number, cost: number, upstreamMs: number | null): RequestLog =>
  ({
    id: crypto.randomUUID(),
    createdAt: new Date(),
    organisationId: 'org',
    workspaceId: 'ws',
    apiKeyId: null,
    virtualKey: 'vk',
    provider: 'openai',
    model,
    route: 'chat.completions',
    status: 200,
    stream: false,
    promptTokens,
    completionTokens,
    totalTokens: promptTokens + completionTokens,
    cost,
    totalMs: 3,
    upstreamMs,
    requestId: null,
    runId: null,
    metadata: {},
    guardrails: [],
    refusal: null,
  }) as RequestLog;

describe('request-log writer metrics', () => {
  it('are all there at each read of /metrics, each record counted once', async () => {
    const registry = new Registry();
    const writer = new RequestLogWriter(t.app.runtime, 10_000, registry);
    const value = (text: string, pattern: string) => Number(new RegExp(`${pattern} ([0-9.e-]+)`).exec(text)?.[1] ?? NaN);

    writer.write(record('m1', 10, 5, 0.5, 20));
    writer.write(record('m1', 1, 2, 0.25, 7_000));
    writer.write(record('m2', 3, 0, 0, null));
    await writer.flush();
    let text = await registry.metrics();
    expect(value(text, 'gatehouse_model_tokens_total\\{provider="openai",model="m1",kind="prompt"\\}')).toBe(11);
    expect(value(text, 'gatehouse_model_tokens_total\\{provider="openai",model="m1",kind="completion"\\}')).toBe(7);
    expect(value(text, 'gatehouse_model_tokens_total\\{provider="openai",model="m2",kind="prompt"\\}')).toBe(3);
    expect(text).not.toContain('model="m2",kind="completion"');
    expect(value(text, 'gatehouse_model_cost_dollars_total\\{provider="openai",model="m1"\\}')).toBe(0.75);
    expect(value(text, 'gatehouse_upstream_latency_seconds_count\\{provider="openai",model="m1"\\}')).toBe(2);
    expect(value(text, 'gatehouse_upstream_latency_seconds_bucket\\{le="0.025",provider="openai",model="m1"\\}')).toBe(1);
    expect(value(text, 'gatehouse_upstream_latency_seconds_sum\\{provider="openai",model="m1"\\}')).toBeCloseTo(7.02);

    // Read again with nothing new: the same figures (nothing counted twice).
    expect(await registry.metrics()).toBe(text);

    writer.write(record('m1', 4, 1, 0.25, 30));
    await writer.flush();
    text = await registry.metrics();
    expect(value(text, 'gatehouse_model_tokens_total\\{provider="openai",model="m1",kind="prompt"\\}')).toBe(15);
    expect(value(text, 'gatehouse_model_cost_dollars_total\\{provider="openai",model="m1"\\}')).toBe(1);
    expect(value(text, 'gatehouse_upstream_latency_seconds_count\\{provider="openai",model="m1"\\}')).toBe(3);
  });
});
