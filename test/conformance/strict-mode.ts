/**
 * The test app's GATEHOUSE_CONFORMANCE mode (test/helpers/app.ts): any test's response that does not
 * match its document, and is not a listed difference or pending mismatch, fails at once.
 */
import type { RecordedResponse } from '../helpers/app.js';
import { check, describeProblem } from './check.js';
import { documents } from './documents.js';
import { pendingFor } from './differences.js';

// Read the documents while the test file loads: seconds that no test's timeout should pay.
documents();

export function assertConforms(response: RecordedResponse): void {
  const problems = check(response).problems.filter((problem) => !pendingFor(problem));
  if (problems.length > 0) throw new Error(`Not as the published document says:\n${problems.map(describeProblem).join('\n')}`);
}
