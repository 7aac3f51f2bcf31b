/**
 * The error hierarchy and the registry of error codes. Services throw these; the GraphQL layer passes them through Yoga's masking
 * with their `extensions`, and the REST layer turns those into a status and the four-key envelope
 * `{ error: { message, type, param, code } }` (docs/contract.md#errors). Anything that is not an AppError is
 * masked as a 500.
 */
export type ErrorType =
  | 'invalid_request_error'
  | 'authentication_error'
  | 'permission_error'
  | 'usage_limit_error'
  | 'rate_limit_error'
  | 'guardrail_error'
  | 'server_error';

export interface AppErrorOptions {
  param?: string | null;
  code?: string | null;
  /** Response headers the error needs (Retry-After, Allow, x-ratelimit-*). */
  headers?: Record<string, string>;
  /** Extra top-level keys beside `error` in the REST body (e.g. guardrail_results). */
  extra?: Record<string, unknown>;
}

export abstract class AppError extends Error {
  abstract readonly status: number;
  abstract readonly type: ErrorType;
  readonly param: string | null;
  readonly code: string | null;
  readonly headers: Record<string, string>;
  readonly extra: Record<string, unknown>;

  constructor(message: string, options: AppErrorOptions = {}) {
    super(message);
    this.param = options.param ?? null;
    this.code = options.code ?? null;
    this.headers = options.headers ?? {};
    this.extra = options.extra ?? {};
  }
}

export class BadRequestError extends AppError {
  readonly status = 400;
  readonly type = 'invalid_request_error' as const;
}

export class AuthenticationError extends AppError {
  readonly status = 401;
  readonly type = 'authentication_error' as const;
  constructor(message: string, options: AppErrorOptions = {}) {
    super(message, { code: 'invalid_api_key', ...options });
  }
}

export class PermissionError extends AppError {
  readonly status = 403;
  readonly type = 'permission_error' as const;
}

export class NotFoundError extends AppError {
  readonly status = 404;
  readonly type = 'invalid_request_error' as const;
}

export class MethodNotAllowedError extends AppError {
  readonly status = 405;
  readonly type = 'invalid_request_error' as const;
  constructor(method: string, path: string, allow: string[]) {
    super(`Method ${method} is not allowed on ${path}. Allowed: ${allow.join(', ')}.`, {
      code: 'method_not_allowed',
      headers: { allow: allow.join(', ') },
    });
  }
}

export class ConflictError extends AppError {
  readonly status = 409;
  readonly type = 'invalid_request_error' as const;
  constructor(message: string, options: AppErrorOptions = {}) {
    super(message, { code: 'conflict', ...options });
  }
}

export class UsageLimitError extends AppError {
  readonly status = 412;
  readonly type = 'usage_limit_error' as const;
  constructor(message: string, options: AppErrorOptions = {}) {
    super(message, { code: 'usage_limit_exceeded', ...options });
  }
}

export class PayloadTooLargeError extends AppError {
  readonly status = 413;
  readonly type = 'invalid_request_error' as const;
  constructor(limitBytes: number) {
    super(`Request body is larger than the limit of ${limitBytes} bytes.`, { code: 'payload_too_large' });
  }
}

export class UnsupportedMediaTypeError extends AppError {
  readonly status = 415;
  readonly type = 'invalid_request_error' as const;
  constructor() {
    super('Request body must be JSON: send it with Content-Type: application/json.', {
      code: 'unsupported_media_type',
    });
  }
}

export class RateLimitError extends AppError {
  readonly status = 429;
  readonly type = 'rate_limit_error' as const;
  constructor(message: string, options: AppErrorOptions = {}) {
    super(message, { code: 'rate_limit_exceeded', ...options });
  }
}

export class GuardrailDeniedError extends AppError {
  readonly status = 446;
  readonly type = 'guardrail_error' as const;
  constructor(message: string, guardrailResults: unknown[]) {
    super(message, { code: 'guardrail_denied', extra: { guardrail_results: guardrailResults } });
  }
}

export class ServiceUnavailableError extends AppError {
  readonly status = 503;
  readonly type = 'server_error' as const;
}

export class InternalError extends AppError {
  readonly status = 500;
  readonly type = 'server_error' as const;
  constructor(requestId: string) {
    super(`Internal server error (request ${requestId}).`);
  }
}

/** The four keys every GraphQL error's `extensions` carry, whoever raised the error. */
export interface ErrorFields {
  status: number;
  type: ErrorType;
  param: string | null;
  code: string | null;
}

/**
 * The `extensions` of every GraphQL error the gateway answers with, built here and nowhere else:
 * the keys the error already carries (`carried`: graphql-js's or graphql-armor's own, Yoga's `http`
 * status instruction), then `status`, `type`, `param` and `code`, in that order. An AppError adds
 * its headers and extra ({@link toExtensions}) for the REST layer to read back; errors answered at
 * the edge or refused before execution carry only these.
 */
export function graphqlExtensions(fields: ErrorFields, carried: Record<string, unknown> = {}): ErrorFields & Record<string, unknown> {
  return { ...carried, status: fields.status, type: fields.type, param: fields.param, code: fields.code };
}

/** The JSON shape an AppError travels in, between the layers (GraphQL `extensions`). */
export interface ErrorExtensions extends ErrorFields {
  headers: Record<string, string>;
  extra: Record<string, unknown>;
}

export function toExtensions(error: AppError): ErrorExtensions {
  return { ...graphqlExtensions(error), headers: error.headers, extra: error.extra };
}

// ---------------------------------------------------------------------------------------------
// The registry: every `code` the API answers with, its status and what it means. README's error
// table lists exactly these (a test compares them, and checks that every code the source uses is
// here). Messages that several places build are the factories below, worded once.

export const ERROR_CODES = {
  invalid_json: [400, 'The body is not valid JSON.'],
  invalid_beta: [400, 'A run route without `Vendor-Beta: assistants=v2` (or `OpenAI-Beta`).'],
  missing_required_parameter: [400, 'A required field or query parameter is missing.'],
  unknown_parameter: [400, 'A key the operation does not accept (where unknown keys are refused).'],
  invalid_type: [400, 'A value of the wrong JSON type.'],
  invalid_value: [400, 'A value of the right type that is not allowed.'],
  invalid_character: [400, 'U+0000 or a lone UTF-16 surrogate in a string or an object key.'],
  nesting_too_deep: [400, 'JSON nested deeper than the limit.'],
  invalid_number: [400, 'A JSON number too large to be represented (such as 1e400).'],
  empty_string: [400, 'A blank string where text is required.'],
  empty_array: [400, 'An empty array where one item is required.'],
  string_above_max_length: [400, 'A string (or metadata key) too long.'],
  array_above_max_length: [400, 'An array too long.'],
  object_above_max_properties: [400, 'An object with too many keys.'],
  integer_below_min_value: [400, 'An integer below its minimum.'],
  integer_above_max_value: [400, 'An integer above its maximum (never beyond a 32-bit integer).'],
  decimal_below_min_value: [400, 'A number below its minimum.'],
  decimal_above_max_value: [400, 'A number above its maximum.'],
  graphql_validation_failed: [400, 'A GraphQL document or its variables do not validate.'],
  missing_virtual_key: [400, 'Model work without a virtual key header.'],
  virtual_key_mismatch: [400, 'Tool outputs submitted with another virtual key than the run’s.'],
  model_price_unknown: [400, 'A cost budget applies but the model has no price.'],
  model_not_offered: [400, 'A model the integration does not offer (disabled, or not enabled while allow_all_models is off).'],
  ambiguous_slug: [400, 'A slug that names objects in several workspaces.'],
  collection_cycle: [400, 'A collection moved under itself or a descendant.'],
  collection_archived: [400, 'A change to an archived collection.'],
  default_collection: [400, 'The default collection cannot be archived or moved.'],
  prompt_archived: [400, 'A change to, or a render or completion of, an archived prompt.'],
  policy_archived: [400, 'A change to an archived policy.'],
  guardrail_archived: [400, 'A change to an archived guardrail.'],
  invalid_request: [400, 'A graphql-sse request the protocol does not allow.'],
  invalid_api_key: [401, 'No API key, or an unknown or revoked one.'],
  invalid_metrics_token: [401, '`/metrics` without its bearer token.'],
  permission_denied: [403, 'An organisation-only operation with a workspace key.'],
  integration_disabled: [403, 'The integration is disabled for the workspace.'],
  unknown_url: [404, 'No route has this path.'],
  invalid_cursor: [404, 'A paging cursor that names no object of the list.'],
  workspace_not_found: [404, 'Unknown or invisible workspace.'],
  collection_not_found: [404, 'Unknown or invisible collection.'],
  prompt_not_found: [404, 'Unknown or invisible prompt, or a version it does not have.'],
  policy_not_found: [404, 'Unknown or invisible policy.'],
  policy_entity_not_found: [404, 'A usage-limits policy has never counted usage for this value key.'],
  guardrail_not_found: [404, 'Unknown or invisible guardrail.'],
  integration_not_found: [404, 'Unknown or invisible integration.'],
  provider_not_found: [404, 'Unknown or invisible provider.'],
  virtual_key_not_found: [404, 'The virtual key names no provider of the workspace.'],
  stream_not_found: [404, 'A graphql-sse stream token nobody holds.'],
  method_not_allowed: [405, 'A known path with another method (`Allow` lists the right ones).'],
  not_acceptable: [406, 'A graphql-sse request that does not accept `text/event-stream`.'],
  conflict: [409, 'A slug already taken (control plane only).'],
  stream_conflict: [409, 'A graphql-sse stream token already in use.'],
  usage_limit_exceeded: [412, 'A usage limit is exhausted.'],
  payload_too_large: [413, 'A body larger than the limit.'],
  unsupported_media_type: [415, 'A body without `Content-Type: application/json`.'],
  rate_limit_exceeded: [429, 'A rate limit is reached (`Retry-After` says when to try again).'],
  guardrail_denied: [446, 'A guardrail with `deny: true` failed (`guardrail_results` beside `error`).'],
  server_error: [500, 'Anything unexpected: only the request id is shown.'],
  shutting_down: [503, 'The server is stopping.'],
} as const satisfies Record<string, readonly [number, string]>;

export type ErrorCode = keyof typeof ERROR_CODES;

/** `an integer`, `a string`, … as OpenAI names the type of a value. */
export function describeValue(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'number') return Number.isInteger(value) ? 'an integer' : 'a decimal';
  if (typeof value === 'string') return 'a string';
  if (typeof value === 'boolean') return 'a boolean';
  if (typeof value === 'object') return 'an object';
  return typeof value;
}

/** `'a', 'b' and 'c'` */
export function quoteList(values: readonly unknown[]): string {
  const quoted = values.map((v) => `'${String(v)}'`);
  return quoted.length <= 1 ? quoted.join('') : `${quoted.slice(0, -1).join(', ')} and ${quoted[quoted.length - 1]}`;
}

/** Missing required parameter: 'x'. (or query parameter) */
export function missingParameter(param: string, location: 'body' | 'query' = 'body'): BadRequestError {
  const what = location === 'query' ? 'query parameter' : 'parameter';
  return new BadRequestError(`Missing required ${what}: '${param}'.`, { param, code: 'missing_required_parameter' });
}

/** Invalid type for 'x': expected a string, but got an integer instead. */
export function invalidType(param: string, expected: string, value: unknown): BadRequestError {
  return new BadRequestError(`Invalid type for '${param}': expected ${expected}, but got ${describeValue(value)} instead.`, { param, code: 'invalid_type' });
}

/** Invalid value: 'x'. Supported values are: 'a' and 'b'. */
export function unsupportedValue(param: string, value: unknown, supported: readonly unknown[]): BadRequestError {
  const shown = typeof value === 'string' ? `'${value}'` : JSON.stringify(value);
  return new BadRequestError(`Invalid value: ${shown}. Supported values are: ${quoteList(supported)}.`, { param, code: 'invalid_value' });
}

/** Invalid 'x': <what is wrong>. — e.g. a rule a schema alone cannot check (it needs stored data). */
export function invalidInput(param: string, problem: string, code: ErrorCode = 'invalid_value'): BadRequestError {
  return new BadRequestError(`Invalid '${param}': ${problem}`, { param, code });
}

export function invalidJson(): BadRequestError {
  return new BadRequestError('We could not parse the JSON body of your request. The body must be valid JSON.', { code: 'invalid_json' });
}

export function unknownUrl(method: string, path: string): NotFoundError {
  return new NotFoundError(`Unknown request URL: ${method} ${path}.`, { code: 'unknown_url' });
}

/** A request that arrived while the server drains: try again (on a new connection) in a second. */
export function shuttingDown(): ServiceUnavailableError {
  return new ServiceUnavailableError('The server is shutting down; retry the request.', { code: 'shutting_down', headers: { 'retry-after': '1' } });
}
