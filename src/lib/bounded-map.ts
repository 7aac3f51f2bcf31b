/**
 * `map.set(key, value)` for a map that must not grow without bound: a new key beyond `limit`
 * entries first drops the oldest one (insertion order), a cheap stand-in for least recently used.
 * A key already held is replaced in place and drops nothing.
 */
export function setBounded<K, V>(map: Map<K, V>, key: K, value: V, limit: number): void {
  if (!map.has(key) && map.size >= limit) map.delete(map.keys().next().value!);
  map.set(key, value);
}
