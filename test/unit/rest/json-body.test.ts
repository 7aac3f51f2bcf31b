import { describe, expect, it } from 'vitest';
import { jsonBody } from '../../../rest/json-body.js';

/** The body's bytes, whatever form jsonBody chose. */
const bytesOf = (body: string | Uint8Array): Buffer => (typeof body === 'string' ? Buffer.from(body) : Buffer.from(body));

const child = (i: number) => ({
  id: `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`,
  name: i % 7 === 0 ? `Kind ${i} – “quoted” ✓ 😀` : `Child ${i}`,
  last_updated_at: '2026-11-24T11:35:50.562Z',
  missing: undefined,
  collection_details: { child_collections_count: i, prompts_count: 0, child_collections_last_updated_at: null },
});

describe('jsonBody', () => {
  it('answers a small payload as the string JSON.stringify gives', () => {
    const payload = { id: 'a', child_collections: [child(1), child(2)] };
    expect(jsonBody(payload)).toBe(JSON.stringify(payload));
  });

  it('answers a large payload without a long list as its UTF-8 bytes', () => {
    const payload = { text: 'é'.repeat(70_000) };
    const body = jsonBody(payload);
    expect(typeof body).not.toBe('string');
    expect(bytesOf(body).equals(Buffer.from(JSON.stringify(payload)))).toBe(true);
  });

  // Lengths around the slices' edges, non-ASCII text, fields JSON.stringify leaves out or writes as null.
  for (const length of [201, 224, 225, 1000, 1001]) {
    it(`writes a field with ${length} items byte for byte as JSON.stringify`, () => {
      const list: unknown[] = Array.from({ length }, (_, i) => child(i));
      list[5] = undefined;
      list[40] = () => 1;
      const payload = {
        id: 'p',
        skipped: undefined,
        fn: () => 1,
        child_collections: list,
        empty: [],
        nested: { items: [1, 2, 3] },
        at: new Date(Date.UTC(2026, 10, 24)),
        last: 'ü',
      };
      const body = jsonBody(payload);
      expect(typeof body).not.toBe('string');
      expect(bytesOf(body).toString('utf8')).toBe(JSON.stringify(payload));
    });
  }

  it('writes a long list answered alone byte for byte as JSON.stringify', () => {
    const payload = Array.from({ length: 500 }, (_, i) => child(i));
    expect(bytesOf(jsonBody(payload)).toString('utf8')).toBe(JSON.stringify(payload));
  });

  it('grows its buffer for a long list of large items', () => {
    const payload = { data: Array.from({ length: 300 }, (_, i) => ({ i, text: '✓'.repeat(1000) })) };
    expect(bytesOf(jsonBody(payload)).toString('utf8')).toBe(JSON.stringify(payload));
  });
});
