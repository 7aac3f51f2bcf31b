import { z } from 'zod';
import { defineCheck } from './check.js';
import { conditionResult, notParam } from './text-utils.js';

const parameters = z.object({ suffix: z.string().min(1, 'must not be empty'), not: notParam });

/**
 * Trailing whitespace is ignored (model answers often end with a newline), and, as in Portkey, a
 * full stop after the suffix still counts as ending with it.
 */
export const endsWith = defineCheck('default.endsWith', parameters, (p, ctx) => {
  const text = ctx.text.trimEnd();
  const matched = text.endsWith(p.suffix) || text.endsWith(`${p.suffix}.`);
  return conditionResult(matched, p.not, `The text ${matched ? 'ends' : 'does not end'} with "${p.suffix}".`, { suffix: p.suffix });
});
