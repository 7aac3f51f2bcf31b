/**
 * Insertion order for lists and conversations. `created_at` has second resolution (and a test
 * clock may stand still), so rows also carry an ordinal: wall-clock microseconds-ish, forced to
 * grow within the process. It only orders; it is never shown.
 */
let last = 0;

export function nextOrdinal(): number {
  // Date.now() * 1000 stays below 2^53 until the year 2255, so every value is an exact double.
  last = Math.max(last + 1, Date.now() * 1000);
  return last;
}
