import { z } from 'zod';
import { defineCheck } from './check.js';
import { conditionResult, count, minNotAboveMax, notParam } from './text-utils.js';

const parameters = z
  .object({ minCharacters: count(0), maxCharacters: count(9999999), not: notParam })
  .superRefine(minNotAboveMax('minCharacters', 'maxCharacters'));

export const characterCount = defineCheck('default.characterCount', parameters, (p, ctx) => {
  // Code points, not UTF-16 units, so an emoji counts as one character.
  let n = 0;
  for (const _ of ctx.text) n++;
  const inRange = n >= p.minCharacters && n <= p.maxCharacters;
  return conditionResult(
    inRange,
    p.not,
    `The text has ${n} characters, ${inRange ? 'within' : 'outside'} the range ${p.minCharacters}-${p.maxCharacters}.`,
    { characterCount: n, minCharacters: p.minCharacters, maxCharacters: p.maxCharacters },
  );
});
