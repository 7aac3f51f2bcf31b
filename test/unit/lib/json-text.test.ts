import { expect, it } from 'vitest';
import { jsonText } from '../../../src/lib/json-text.js';

it('is JSON.stringify of what it is given', () => {
  for (const value of [{ a: 1, b: [true, null, 'x'] }, [1, { c: 'd' }], 'text', 3.5, true, null]) expect(jsonText(value)).toBe(JSON.stringify(value));
});

it('serialises an object once: asked again for the same object, it gives the first text', () => {
  const data = { id: 'msg_1', delta: { content: [{ text: { value: 'Hello' } }] } };
  const first = jsonText(data);
  // A snapshot must not change once serialised; if it did, the kept text is the one the log was written with.
  data.delta.content[0].text.value = 'changed';
  expect(jsonText(data)).toBe(first);
  // Another object, even with the same content, has its own text.
  const other = { id: 'msg_1', delta: { content: [{ text: { value: 'changed' } }] } };
  expect(jsonText(other)).toBe(JSON.stringify(other));
});
