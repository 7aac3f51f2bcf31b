import { z } from 'zod';
import { defineCheck } from './check.js';
import { operatorHolds, setOperator } from './text-utils.js';

const parameters = z.object({
  metadataKeys: z.array(z.string().min(1, 'must not be empty')).min(1, 'must list at least one key'),
  // "Required" keys: by default all of them must be present.
  operator: setOperator.default('all'),
});

export const requiredMetadataKeys = defineCheck('default.requiredMetadataKeys', parameters, (p, ctx) => {
  const metadata = ctx.metadata ?? {};
  const found = p.metadataKeys.filter((k) => Object.hasOwn(metadata, k));
  const missing = p.metadataKeys.filter((k) => !Object.hasOwn(metadata, k));
  const verdict = operatorHolds(p.operator, found.length, p.metadataKeys.length);
  return {
    verdict,
    explanation: `Operator '${p.operator}' ${verdict ? 'satisfied' : 'not satisfied'}: found [${found.join(', ')}], missing [${missing.join(', ')}].`,
    data: { operator: p.operator, found_metadata_keys: found, missing_metadata_keys: missing },
  };
});
