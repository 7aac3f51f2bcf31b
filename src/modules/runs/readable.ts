import type { EntityManager } from '@mikro-orm/core';
import { MessageSchema } from './message.entity.js';
import { RunStepSchema } from './run-step.entity.js';
import { RunSchema } from './run.entity.js';
import { textOf } from './wire.js';

/**
 * What a run's model already has to read besides the request's new input: the thread's messages
 * and the run's tool outputs so far, with the completion tokens the run has used. Usage
 * estimates bound a request's tokens with it (enforcement asks; the runs tables stay this module's).
 */
export async function readableSoFar(em: EntityManager, at: { threadId: string | null; runId: string | null }): Promise<{ texts: string[]; completionTokensUsed: number }> {
  const texts: string[] = [];
  let completionTokensUsed = 0;
  if (at.threadId) {
    const messages = await em.find(MessageSchema, { threadId: at.threadId }, { fields: ['content'] });
    for (const m of messages) texts.push(textOf(m.content));
  }
  if (at.runId) {
    const [steps, run] = await Promise.all([
      em.find(RunStepSchema, { runId: at.runId, type: 'tool_calls' }, { fields: ['stepDetails'] }),
      em.findOne(RunSchema, { id: at.runId }, { fields: ['completionTokens'] }),
    ]);
    for (const step of steps) {
      if (step.stepDetails.type !== 'tool_calls') continue;
      for (const call of step.stepDetails.tool_calls) texts.push(call.function.output ?? '');
    }
    completionTokensUsed = run?.completionTokens ?? 0;
  }
  return { texts, completionTokensUsed };
}
