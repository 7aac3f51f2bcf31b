import type { Plugin } from 'graphql-yoga';
import { UnsupportedMediaTypeError } from '../errors.js';
import { graphqlAppErrorResponse } from './graphql-errors.js';

/**
 * /graphql bodies must be of a type Yoga parses. Yoga itself would answer any other with an empty
 * 415; this one says what to send, with the extensions every GraphQL error carries. It runs after
 * the body limit's parser hook, which wraps only a parser that exists.
 */
export function graphqlMediaTypePlugin(): Plugin {
  return {
    onRequestParse({ requestParser, setRequestParser }) {
      if (!requestParser) setRequestParser(() => graphqlAppErrorResponse(new UnsupportedMediaTypeError()));
    },
  };
}
