/**
 * The error hierarchy. Services throw these; the GraphQL layer passes them through Yoga's masking
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

export class InternalError extends AppError {
  readonly status = 500;
  readonly type = 'server_error' as const;
  constructor(requestId: string) {
    super(`Internal server error (request ${requestId}).`);
  }
}

/** The JSON shape an AppError travels in, between the layers (GraphQL `extensions`). */
export interface ErrorExtensions {
  status: number;
  type: ErrorType;
  param: string | null;
  code: string | null;
  headers: Record<string, string>;
  extra: Record<string, unknown>;
}

export function toExtensions(error: AppError): ErrorExtensions {
  return {
    status: error.status,
    type: error.type,
    param: error.param,
    code: error.code,
    headers: error.headers,
    extra: error.extra,
  };
}
