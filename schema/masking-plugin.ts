import { handleStreamOrSingleExecutionResult, type Plugin } from '@envelop/core';
import type { ExecutionResult } from 'graphql';
import type { RequestContext } from '../src/context.js';
import { maskError } from './errors.js';

/**
 * Yoga's own masking does not know the request id, so errors are masked here, where the context
 * (and so the id and the request logger) is at hand.
 */
export function maskingPlugin(): Plugin<RequestContext> {
  const mask = ({ args, result, setResult }: { args: { contextValue: RequestContext }; result: ExecutionResult; setResult: (r: ExecutionResult) => void }) => {
    if (!result.errors?.length) return;
    const ctx = args.contextValue;
    setResult({ ...result, errors: result.errors.map((error) => maskError(error, ctx.requestId, ctx.log)) });
  };
  return {
    onExecute: () => ({ onExecuteDone: (payload) => handleStreamOrSingleExecutionResult(payload as never, mask as never) }),
    onSubscribe: () => ({ onSubscribeResult: (payload) => handleStreamOrSingleExecutionResult(payload as never, mask as never) }),
  };
}
