import { z } from 'zod';
import { defineCheck } from './check.js';
import { conditionResult, count, minNotAboveMax, notParam } from './text-utils.js';

const parameters = z
  .object({ minWords: count(0), maxWords: count(99999), not: notParam })
  .superRefine(minNotAboveMax('minWords', 'maxWords'));

/** Words are runs of non-whitespace; empty text has 0 words (Portkey errors on empty text instead). */
export function countWords(text: string): number {
  const trimmed = text.trim();
  return trimmed ? trimmed.split(/\s+/).length : 0;
}

export const wordCount = defineCheck('default.wordCount', parameters, (p, ctx) => {
  const n = countWords(ctx.text);
  const inRange = n >= p.minWords && n <= p.maxWords;
  return conditionResult(
    inRange,
    p.not,
    `The text has ${n} words, ${inRange ? 'within' : 'outside'} the range ${p.minWords}-${p.maxWords}.`,
    { wordCount: n, minWords: p.minWords, maxWords: p.maxWords },
  );
});
