import { z } from 'zod';
import { defineCheck } from './check.js';
import { conditionResult, notParam } from './text-utils.js';

const parameters = z.object({ not: notParam });

/** Mirror of default.alluppercase: uppercase and titlecase letters in any script make it fail. */
export const allLowercase = defineCheck('default.isAllLowerCase', parameters, (p, ctx) => {
  const matched = !/[\p{Lu}\p{Lt}]/u.test(ctx.text);
  return conditionResult(matched, p.not, matched ? 'The text has no uppercase letters.' : 'The text contains uppercase letters.');
});
