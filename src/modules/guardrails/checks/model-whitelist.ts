import { z } from 'zod';
import { defineCheck } from './check.js';
import { conditionResult, notParam } from './text-utils.js';

const parameters = z.object({
  models: z.array(z.string().min(1, 'must not be empty')).min(1, 'must list at least one model'),
  not: notParam,
});

export const modelWhitelist = defineCheck('default.modelWhitelist', parameters, (p, ctx) => {
  // A request without a model cannot be shown to be allowed, whatever `not` says.
  if (!ctx.model) return { verdict: false, explanation: 'The request names no model.', data: { allowedModels: p.models, not: p.not } };
  const listed = p.models.includes(ctx.model);
  return conditionResult(listed, p.not, `Model "${ctx.model}" is ${listed ? '' : 'not '}in the list.`, {
    requestedModel: ctx.model,
    allowedModels: p.models,
  });
});
