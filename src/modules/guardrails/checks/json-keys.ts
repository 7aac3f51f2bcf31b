import { z } from 'zod';
import { defineCheck } from './check.js';
import { extractJson, isPlainObject, operatorHolds, setOperator } from './text-utils.js';

const parameters = z.object({
  keys: z.array(z.string().min(1, 'must not be empty')).min(1, 'must list at least one key'),
  operator: setOperator.default('any'),
});

/** Top-level keys of the first JSON object in the text that satisfies the operator (Portkey's rule). */
export const jsonKeys = defineCheck('default.jsonKeys', parameters, (p, ctx) => {
  const objects = extractJson(ctx.text).filter(isPlainObject);
  if (objects.length === 0) {
    return { verdict: false, explanation: 'No JSON object found in the text.', data: { operator: p.operator, keys: p.keys } };
  }
  let best = { present: [] as string[], missing: p.keys, verdict: false };
  for (const obj of objects) {
    const present = p.keys.filter((k) => Object.hasOwn(obj, k));
    const verdict = operatorHolds(p.operator, present.length, p.keys.length);
    if (verdict || present.length > best.present.length) best = { present, missing: p.keys.filter((k) => !Object.hasOwn(obj, k)), verdict };
    if (verdict) break;
  }
  return {
    verdict: best.verdict,
    explanation: `Operator '${p.operator}' ${best.verdict ? 'satisfied' : 'not satisfied'}: present [${best.present.join(', ')}], missing [${best.missing.join(', ')}].`,
    data: { operator: p.operator, presentKeys: best.present, missingKeys: best.missing },
  };
});
