import { exportJWK, generateKeyPair, SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { evaluateGuardrail, evaluateGuardrails } from '../../../src/modules/guardrails/evaluate.js';
import { createJwksCache } from '../../../src/modules/guardrails/checks/jwks-cache.js';
import { defineCheck } from '../../../src/modules/guardrails/checks/check.js';
import { z } from 'zod';
import { normalizeActions, validateChecks, type ActionsEntry, type CheckEntry } from '../../../src/modules/guardrails/validate.js';
import { startJwksServer, type JwksServer } from './jwks-server.js';

function guardrail(checks: CheckEntry[], actions?: ActionsEntry) {
  const c = validateChecks(checks);
  if (!c.ok) throw new Error('bad fixture');
  return { checks: c.checks, actions: normalizeActions(actions) };
}

const ctx = { text: 'hello world', model: 'gpt-4o', headers: {} };

describe('evaluateGuardrail', () => {
  it('passes when every enabled check passes, with on_success feedback', async () => {
    const g = guardrail(
      [
        { id: 'default.wordCount', name: 'short', parameters: { maxWords: 5 } },
        { id: 'default.modelWhitelist', parameters: { models: ['gpt-4o'] } },
        { id: 'default.contains', is_enabled: false, parameters: { words: ['absent'], operator: 'all' } },
      ],
      { deny: true, on_success: { feedback: { value: 7, metadata: 'good' } } },
    );
    const out = await evaluateGuardrail(g, ctx);
    expect(out.verdict).toBe(true);
    expect(out.deny).toBe(false);
    expect(out.async).toBe(false);
    expect(out.feedback).toEqual({ value: 7, weight: 1, metadata: 'good' });
    expect(out.checks.map((c) => [c.id, c.name, c.verdict])).toEqual([
      ['default.wordCount', 'short', true],
      ['default.modelWhitelist', 'default.modelWhitelist', true],
    ]);
    expect(out.checks[0]!.explanation).toBe('The text has 2 words, within the range 0-5.');
    for (const c of out.checks) expect(c.duration_ms).toBeGreaterThanOrEqual(0);
    expect(out.duration_ms).toBeGreaterThanOrEqual(0);
  });

  it('fails when one check fails: on_fail feedback, deny only when actions.deny', async () => {
    const checks = [
      { id: 'default.wordCount', parameters: { maxWords: 5 } },
      { id: 'default.endsWith', parameters: { suffix: 'bye' } },
    ];
    const denying = await evaluateGuardrail(guardrail(checks, { deny: true, async: true }), ctx);
    expect(denying.verdict).toBe(false);
    expect(denying.deny).toBe(true);
    expect(denying.async).toBe(true);
    expect(denying.feedback).toEqual({ value: -5, weight: 1, metadata: '' });
    expect(denying.checks.map((c) => c.verdict)).toEqual([true, false]);

    const lenient = await evaluateGuardrail(guardrail(checks), ctx);
    expect(lenient.verdict).toBe(false);
    expect(lenient.deny).toBe(false);
  });

  it('a guardrail whose checks are all disabled passes', async () => {
    const out = await evaluateGuardrail(guardrail([{ id: 'default.alluppercase', is_enabled: false }], { deny: true }), ctx);
    expect(out).toMatchObject({ verdict: true, checks: [], deny: false });
  });

  it('fails unknown ids and invalid stored parameters instead of throwing', async () => {
    const actions = normalizeActions();
    const out = await evaluateGuardrail(
      {
        checks: [
          { id: 'default.gone', is_enabled: true, parameters: {} },
          { id: 'default.regexMatch', is_enabled: true, parameters: { rule: '(' } },
        ],
        actions,
      },
      ctx,
    );
    expect(out.verdict).toBe(false);
    expect(out.checks.map((c) => [c.verdict, c.error])).toEqual([
      [false, 'unknown_check'],
      [false, 'invalid_parameters'],
    ]);
  });

  describe('per-check time budget', () => {
    let server: JwksServer;
    let token: string;
    beforeAll(async () => {
      const { publicKey, privateKey } = await generateKeyPair('RS256');
      server = await startJwksServer([{ ...(await exportJWK(publicKey)), kid: 'k', alg: 'RS256' }]);
      token = await new SignJWT({}).setProtectedHeader({ alg: 'RS256', kid: 'k' }).setIssuedAt().setExpirationTime('5m').sign(privateKey);
    });
    afterAll(() => server.close());

    it("a check exceeding checkTimeoutMs fails with 'timed out'; the others still count", async () => {
      server.delayMs = 1000;
      const g = guardrail([
        { id: 'default.jwt', name: 'auth', parameters: { jwksUri: server.url, headerKey: 'authorization' } },
        { id: 'default.wordCount', parameters: { maxWords: 5 } },
      ]);
      const started = performance.now();
      const out = await evaluateGuardrail(g, { ...ctx, headers: { authorization: `Bearer ${token}` } }, { jwksCache: createJwksCache(), checkTimeoutMs: 100 });
      expect(performance.now() - started).toBeLessThan(900);
      expect(out.verdict).toBe(false);
      expect(out.checks[0]).toMatchObject({ id: 'default.jwt', name: 'auth', verdict: false, explanation: 'timed out', error: 'timeout' });
      expect(out.checks[0]!.duration_ms).toBeGreaterThanOrEqual(90);
      expect(out.checks[1]!.verdict).toBe(true);
    });

    it('the same check passes within the budget', async () => {
      server.delayMs = 0;
      const g = guardrail([{ id: 'default.jwt', parameters: { jwksUri: server.url, headerKey: 'authorization' } }]);
      const out = await evaluateGuardrail(g, { ...ctx, headers: { authorization: token } }, { jwksCache: createJwksCache(), checkTimeoutMs: 2000 });
      expect(out.verdict).toBe(true);
      expect(out.checks[0]!.explanation).toBe('JWT verified.');
    });
  });
});

describe('checks that answer at once', () => {
  it('are not raced against a timer (no timeout armed per check); their outcome is unchanged', async () => {
    const g = guardrail([
      { id: 'default.wordCount', name: 'short', parameters: { maxWords: 5 } },
      { id: 'default.regexMatch', parameters: { rule: 'w.rld' } },
    ]);
    const armed = vi.spyOn(globalThis, 'setTimeout');
    try {
      const out = await evaluateGuardrail(g, ctx, { checkTimeoutMs: 100 });
      expect(armed).not.toHaveBeenCalled();
      expect(out.verdict).toBe(true);
      expect(out.checks.map((c) => Object.keys(c))).toEqual([
        ['id', 'name', 'verdict', 'explanation', 'duration_ms', 'data'],
        ['id', 'name', 'verdict', 'explanation', 'duration_ms', 'data'],
      ]);
      expect(out.checks[1]).toMatchObject({ id: 'default.regexMatch', name: 'default.regexMatch', verdict: true, data: { rule: 'w.rld', match: { text: 'world', index: 6 }, not: false } });
    } finally {
      armed.mockRestore();
    }
  });

  it('a check that throws, at once or later, fails with its explanation and never rejects', async () => {
    const now = defineCheck('test.throwsNow', z.object({}), () => {
      throw new Error('boom');
    });
    const later = defineCheck('test.rejectsLater', z.object({}), async () => {
      throw new Error('late boom');
    });
    expect(now.judge({}, ctx)).toEqual({ verdict: false, explanation: 'test.throwsNow could not be evaluated: boom', error: 'exception' });
    await expect(now.evaluate({}, ctx)).resolves.toEqual({ verdict: false, explanation: 'test.throwsNow could not be evaluated: boom', error: 'exception' });
    await expect(later.judge({}, ctx)).resolves.toEqual({ verdict: false, explanation: 'test.rejectsLater could not be evaluated: late boom', error: 'exception' });
  });
});

describe('evaluateGuardrails', () => {
  it('evaluates several guardrails in order; async guardrails never deny', async () => {
    const pass = { id: 'g1', ...guardrail([{ id: 'default.wordCount', parameters: { maxWords: 5 } }], { deny: true }) };
    const failAsyncDeny = { id: 'g2', ...guardrail([{ id: 'default.alluppercase' }], { deny: true, async: true }) };
    const failNoDeny = { id: 'g3', ...guardrail([{ id: 'default.endsWith', parameters: { suffix: '!' } }]) };

    const soft = await evaluateGuardrails([pass, failAsyncDeny, failNoDeny], ctx);
    expect(soft.results.map((r) => [r.guardrail.id, r.verdict, r.deny])).toEqual([
      ['g1', true, false],
      ['g2', false, true],
      ['g3', false, false],
    ]);
    expect(soft.verdict).toBe(false);
    expect(soft.deny).toBe(false);

    const failDeny = { id: 'g4', ...guardrail([{ id: 'default.alluppercase' }], { deny: true }) };
    const hard = await evaluateGuardrails([pass, failDeny], ctx);
    expect(hard.deny).toBe(true);
    expect(hard.results[1]!.feedback).toEqual({ value: -5, weight: 1, metadata: '' });

    expect(await evaluateGuardrails([pass], ctx)).toMatchObject({ verdict: true, deny: false });
  });
});
