import { z } from 'zod';
import { defineCheck } from './check.js';
import { conditionResult, count, minNotAboveMax, notParam } from './text-utils.js';

const parameters = z
  .object({ minSentences: count(0), maxSentences: count(99999), not: notParam })
  .superRefine(minNotAboveMax('minSentences', 'maxSentences'));

/**
 * Sentences are non-blank stretches of text separated by runs of . ! or ?, so "Wait... what?!" is
 * two sentences and a final sentence without a full stop still counts. (Portkey counts the
 * punctuation marks themselves, which makes "..." three sentences.)
 */
export function countSentences(text: string): number {
  return text.split(/[.!?]+/).filter((s) => s.trim() !== '').length;
}

export const sentenceCount = defineCheck('default.sentenceCount', parameters, (p, ctx) => {
  const n = countSentences(ctx.text);
  const inRange = n >= p.minSentences && n <= p.maxSentences;
  return conditionResult(
    inRange,
    p.not,
    `The text has ${n} sentences, ${inRange ? 'within' : 'outside'} the range ${p.minSentences}-${p.maxSentences}.`,
    { sentenceCount: n, minSentences: p.minSentences, maxSentences: p.maxSentences },
  );
});
