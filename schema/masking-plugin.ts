import { handleStreamOrSingleExecutionResult, type Plugin } from '@envelop/core';
import type { ExecutionResult } from 'graphql';
import type { RequestContext } from '../src/context.js';
import { extensionsOf, maskError } from './errors.js';

/**
 * Yoga's own masking does not know the request id, so errors are masked here, where the context
 * (and so the id and the request logger) is at hand.
 */
export function maskingPlugin(): Plugin<RequestContext> {
  const mask = ({ args, result, setResult }: { args: { contextValue: RequestContext }; result: ExecutionResult; setResult: (r: ExecutionResult) => void }) => {
    if (!result.errors?.length) return;
    const ctx = args.contextValue;
    const errors = result.errors.map((error) => maskError(error, ctx.requestId, ctx.log));
    // An error's response headers (Retry-After, x-ratelimit-*) reach GraphQL clients too; the
    // first error that sets a header wins.
    for (const error of errors) {
      for (const [name, value] of Object.entries(extensionsOf(error).headers)) ctx.response.headers[name] ??= value;
    }
    setResult({ ...result, errors });
  };
  return {
    onExecute: () => ({ onExecuteDone: (payload) => handleStreamOrSingleExecutionResult(payload as never, mask as never) }),
    onSubscribe: () => ({ onSubscribeResult: (payload) => handleStreamOrSingleExecutionResult(payload as never, mask as never) }),
  };
}
