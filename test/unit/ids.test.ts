import { describe, expect, it } from 'vitest';
import { isUuid, prefixedId, randomAlphanumeric, timeOrderedUuid } from '../../src/lib/ids.js';

describe('random identifiers', () => {
  it('have the asked length and only alphanumerics, across pool refills', () => {
    for (let i = 0; i < 500; i++) expect(randomAlphanumeric(24)).toMatch(/^[A-Za-z0-9]{24}$/);
    expect(prefixedId('run')).toMatch(/^run_[A-Za-z0-9]{24}$/);
  });

  it('do not repeat, and use every character about equally (no modulo bias)', () => {
    const ids = Array.from({ length: 2000 }, () => randomAlphanumeric(24));
    expect(new Set(ids).size).toBe(ids.length);
    const counts = new Map<string, number>();
    for (const char of ids.join('')) counts.set(char, (counts.get(char) ?? 0) + 1);
    expect(counts.size).toBe(62);
    const expected = (2000 * 24) / 62; // ≈ 774 each; 5 standard deviations ≈ ±140
    for (const count of counts.values()) expect(Math.abs(count - expected)).toBeLessThan(140);
  });
});

describe('time-ordered UUIDs (version 7)', () => {
  it('are UUIDs of version 7 and the RFC variant, carrying the time in milliseconds', () => {
    const before = Date.now();
    const id = timeOrderedUuid();
    const after = Date.now();
    expect(isUuid(id)).toBe(true);
    expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    const time = parseInt(id.slice(0, 8) + id.slice(9, 13), 16);
    expect(time).toBeGreaterThanOrEqual(before);
    expect(time).toBeLessThanOrEqual(after);
  });

  it('sort by the time they were made, and do not repeat', async () => {
    const first = Array.from({ length: 1000 }, () => timeOrderedUuid());
    await new Promise((resolve) => setTimeout(resolve, 3));
    const second = Array.from({ length: 1000 }, () => timeOrderedUuid());
    expect(new Set([...first, ...second]).size).toBe(2000);
    for (const earlier of first) expect(earlier < second[0]!).toBe(true);
  });
});
