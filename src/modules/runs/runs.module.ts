import type { DomainModule } from '../module.js';
import { AssistantSchema } from './assistant.entity.js';
import { runExecutor } from './executor.js';
import { MessageSchema } from './message.entity.js';
import { recoverRuns, startSweep } from './recovery.js';
import { RunEventSchema } from './run-event.entity.js';
import { RunStepSchema } from './run-step.entity.js';
import { RunSchema } from './run.entity.js';
import { ThreadSchema } from './thread.entity.js';

/**
 * Runs on threads. `start` recovers runs a previous process left behind (recovery.ts) and starts
 * the expiry sweep; the executor itself starts lazily with the first queued run. `stop` ends
 * executing runs (they fail as interrupted; queued ones stay queued for the next start).
 */
export const runsModule: DomainModule = {
  name: 'runs',
  entities: [AssistantSchema, ThreadSchema, MessageSchema, RunSchema, RunStepSchema, RunEventSchema],
  async start(runtime) {
    runtime.singleton('runs.sweep', () => startSweep(runtime));
    await recoverRuns(runtime, { atStart: true });
  },
  async stop(runtime) {
    runtime.singleton<() => void>('runs.sweep', () => () => {})();
    await runExecutor(runtime).stop();
  },
};
