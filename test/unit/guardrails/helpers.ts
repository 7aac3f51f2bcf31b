import type { CheckContext, CheckOptions, CheckResult } from '../../../src/modules/guardrails/checks/check.js';
import { getCheck } from '../../../src/modules/guardrails/checks/registry.js';

/** Parses parameters like write-time validation does, then evaluates: the path real callers take. */
export async function runCheck(id: string, parameters: Record<string, unknown>, ctx: Partial<CheckContext>, opts: CheckOptions = {}): Promise<CheckResult> {
  const check = getCheck(id);
  if (!check) throw new Error(`no check ${id}`);
  const params = check.parameters.parse(parameters);
  return check.evaluate(params, { text: '', headers: {}, ...ctx }, opts);
}
