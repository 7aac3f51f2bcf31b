import { Ajv, type ValidateFunction } from 'ajv';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { setBounded } from '../../../lib/bounded-map.js';

/**
 * Compiles user JSON schemas with ajv. Draft 2020-12 unless the schema declares draft-07 or
 * draft-06 in `$schema`. Unknown keywords and formats are tolerated (ajv-formats is not installed,
 * so `format` is not asserted); a schema that breaks its meta-schema or has an unresolvable `$ref`
 * is rejected.
 *
 * A fresh Ajv instance per schema: ajv keeps every compiled schema in its own cache and refuses a
 * second schema with the same `$id`, so a shared instance would grow without bound and make
 * unrelated guardrails conflict. Our own small LRU makes recompiling rare.
 */
const MAX_CACHED = 100;
const cache = new Map<string, ValidateFunction>();

export function compileSchema(schema: Record<string, unknown>): ValidateFunction {
  const key = JSON.stringify(schema);
  const hit = cache.get(key);
  if (hit) {
    cache.delete(key);
    cache.set(key, hit);
    return hit;
  }
  const declared = typeof schema.$schema === 'string' ? schema.$schema : '';
  const options = { strict: false, allErrors: false, logger: false as const };
  const ajv = /draft-0[67]/.test(declared) ? new Ajv(options) : new Ajv2020(options);
  const validate = ajv.compile(schema);
  setBounded(cache, key, validate, MAX_CACHED);
  return validate;
}
