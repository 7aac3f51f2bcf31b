import { GraphQLError, valueFromASTUntyped, type ASTNode, type ASTVisitor, type ValidationContext, type ValueNode } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import { graphqlExtensions } from '../src/errors.js';
import { findInputProblem, type InputProblem, type PathPart } from '../src/http/input-guard.js';

/**
 * The input rule of `src/http/input-guard.ts` for GraphQL (over /graphql and /graphql/stream):
 * literals in the document are checked while it is validated, variables before execution. Either
 * way the answer is an error with the usual extensions and `param` naming the argument or
 * variable (`input.name`), and nothing runs.
 */
export function inputGuardPlugin(maxDepth: number): Plugin {
  const refuseVariables = (variables: Readonly<Record<string, unknown>> | null | undefined, stop: (result: { errors: GraphQLError[] }) => void) => {
    for (const [name, value] of Object.entries(variables ?? {})) {
      const problem = findInputProblem(value, maxDepth, [name]);
      if (problem) return stop({ errors: [problemError(problem)] });
    }
  };
  return {
    onValidate({ addValidationRule }) {
      addValidationRule((context: ValidationContext): ASTVisitor => ({
        Argument(node) {
          const problem = literalProblem(node.value, [node.name.value], maxDepth);
          if (problem) context.reportError(problemError(problem, node));
        },
        VariableDefinition(node) {
          const problem = node.defaultValue ? literalProblem(node.defaultValue, [node.variable.name.value], maxDepth) : null;
          if (problem) context.reportError(problemError(problem, node));
        },
      }));
    },
    onExecute({ args, setResultAndStopExecution }) {
      refuseVariables(args.variableValues, setResultAndStopExecution);
    },
    onSubscribe({ args, setResultAndStopExecution }) {
      refuseVariables(args.variableValues, setResultAndStopExecution);
    },
  };
}

/**
 * A literal as plain JSON, then the same walk as any input. The conversion recurses, which is safe:
 * graphql-armor's token limit (GRAPHQL_MAX_TOKENS) bounds how deep a literal can nest.
 */
function literalProblem(value: ValueNode, path: PathPart[], maxDepth: number): InputProblem | null {
  return findInputProblem(valueFromASTUntyped(value), maxDepth, path);
}

function problemError(problem: InputProblem, node?: ASTNode): GraphQLError {
  return new GraphQLError(problem.message, {
    nodes: node,
    extensions: graphqlExtensions({ status: 400, type: 'invalid_request_error', param: problem.param, code: problem.code }, { http: { status: 400 } }),
  });
}
