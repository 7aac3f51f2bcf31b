import { describe, expect, it } from 'vitest';
import { prefixedId, randomAlphanumeric } from '../../src/lib/ids.js';

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
