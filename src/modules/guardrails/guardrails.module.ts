import type { DomainModule } from '../module.js';
import { evaluationWriter } from './evaluation-writer.js';
import { GuardrailEvaluationSchema } from './guardrail-evaluation.entity.js';
import { GuardrailVersionSchema } from './guardrail-version.entity.js';
import { GuardrailSchema } from './guardrail.entity.js';

export const guardrailsModule: DomainModule = {
  name: 'guardrails',
  entities: [GuardrailSchema, GuardrailVersionSchema, GuardrailEvaluationSchema],
  async stop(runtime) {
    await evaluationWriter(runtime).flush();
  },
};
