import { GraphQLError } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import { graphqlExtensions } from '../src/errors.js';
import { requestErrorFields } from './errors.js';

/**
 * Errors in the document itself (syntax, validation, and graphql-armor's depth, alias, cost and
 * token limits) are found before execution, so the masking plugin never sees them. They get the
 * extensions every other error carries (`status` 400, `type`, `param`, `code`) so GraphQL clients
 * read one shape. The HTTP status stays what GraphQL over HTTP gives them.
 */
export function documentErrorsPlugin(): Plugin {
  return {
    onResultProcess({ result, setResult }) {
      if (Array.isArray(result) || Symbol.asyncIterator in result || !result.errors?.length) return;
      if (result.errors.every((error) => typeof error.extensions?.status === 'number')) return;
      setResult({ ...result, errors: result.errors.map(withExtensions) });
    },
  };
}

function withExtensions(error: GraphQLError): GraphQLError {
  if (typeof error.extensions?.status === 'number') return error;
  return new GraphQLError(error.message, {
    nodes: error.nodes,
    source: error.source,
    positions: error.positions,
    path: error.path,
    // Yoga's own refusals say their HTTP status (405 for a mutation over GET); the rest are 400s.
    extensions: graphqlExtensions(requestErrorFields(error, httpStatusOf(error) ?? 400), error.extensions),
  });
}

function httpStatusOf(error: GraphQLError): number | null {
  const status = (error.extensions?.http as { status?: unknown } | undefined)?.status;
  return typeof status === 'number' ? status : null;
}
