import { z } from 'zod';
import { defineCheck } from './check.js';
import { operatorHolds, setOperator } from './text-utils.js';

const parameters = z.object({
  words: z.array(z.string().min(1, 'must not be empty')).min(1, 'must list at least one word or phrase'),
  operator: setOperator.default('any'),
});

/** Case-sensitive substring search, as in Portkey. */
export const contains = defineCheck('default.contains', parameters, (p, ctx) => {
  const found = p.words.filter((w) => ctx.text.includes(w));
  const missing = p.words.filter((w) => !ctx.text.includes(w));
  const verdict = operatorHolds(p.operator, found.length, p.words.length);
  const list = (ws: string[]) => (ws.length ? ws.map((w) => `"${w}"`).join(', ') : 'none');
  return {
    verdict,
    explanation: `Operator '${p.operator}' ${verdict ? 'satisfied' : 'not satisfied'}: found ${list(found)}; missing ${list(missing)}.`,
    data: { operator: p.operator, found, missing },
  };
});
