import vm from 'node:vm';

/**
 * Runs synchronous work under a CPU time budget.
 *
 * User-supplied patterns (regexMatch rules, `pattern` keywords in JSON schemas) can backtrack
 * catastrophically, and a Promise-based timeout cannot interrupt synchronous code. node:vm's
 * `timeout` terminates whatever JavaScript is running on the isolate, including a function from
 * this realm called from inside the context, so the work itself stays ordinary code. The event
 * loop is still blocked for at most `budgetMs`. Cost: about 0.5 ms per call (a watchdog thread),
 * so patterns proven cheap on the text at hand skip it (regex-cost.ts).
 */
const context = vm.createContext({});
const script = new vm.Script('__budgeted()', { filename: 'guardrail-time-budget' });

export type BudgetResult<T> = { ok: true; value: T } | { ok: false; timedOut: true };

export const DEFAULT_BUDGET_MS = 250;

export function runWithBudget<T>(work: () => T, budgetMs: number = DEFAULT_BUDGET_MS): BudgetResult<T> {
  context.__budgeted = work;
  try {
    return { ok: true, value: script.runInContext(context, { timeout: Math.max(1, Math.floor(budgetMs)) }) as T };
  } catch (e) {
    if ((e as { code?: string }).code === 'ERR_SCRIPT_EXECUTION_TIMEOUT') return { ok: false, timedOut: true };
    throw e;
  } finally {
    context.__budgeted = undefined;
  }
}
