import { setFlagsFromString } from 'node:v8';

/**
 * Whether V8 gave two objects the same hidden class (map): `%HaveSameMap`, allowed from here on.
 * Code that builds an object per request on the hot path should reuse one map: an object spread
 * followed by more properties (`{ ...a, b }`) builds a new map, in the old generation, each time.
 */
setFlagsFromString('--allow-natives-syntax');
export const haveSameMap = new Function('a', 'b', 'return %HaveSameMap(a, b)') as (a: object, b: object) => boolean;
