import { z } from 'zod';
import { defineCheck } from './check.js';
import { conditionResult, notParam } from './text-utils.js';

const parameters = z.object({ not: notParam });

/**
 * Only letters matter, in any script (Portkey looks at a-z only). Text without letters passes
 * vacuously: it contains no lowercase letter.
 */
export const allUppercase = defineCheck('default.alluppercase', parameters, (p, ctx) => {
  const matched = !/\p{Ll}/u.test(ctx.text);
  return conditionResult(matched, p.not, matched ? 'The text has no lowercase letters.' : 'The text contains lowercase letters.');
});
