/**
 * The JSON text of an object serialised in two places. A run event's data is written to the run's
 * log as text by the transaction that appends it (src/modules/runs/event-log.ts), and the same
 * object is sent as an SSE frame right after the commit (rest/routes/runs.ts): the frame takes the
 * text the log was written with instead of serialising the object again (a streamed run's ~16
 * events were serialised twice, a few percent of its CPU). The text is kept beside the object in
 * a WeakMap, so it goes when the object goes. It is the text of the object when first asked:
 * what it is given must not change afterwards (event payloads are snapshots, and a frame then
 * says what the log holds).
 */
const texts = new WeakMap<object, string>();

/** `JSON.stringify(value)`; for an object, the text it was given the first time it was asked for. */
export function jsonText(value: unknown): string {
  if (typeof value !== 'object' || value === null) return JSON.stringify(value);
  let text = texts.get(value);
  if (text === undefined) {
    text = JSON.stringify(value);
    texts.set(value, text);
  }
  return text;
}
