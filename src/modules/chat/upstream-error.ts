import { AppError, type ErrorType } from '../../errors.js';

/**
 * A failure of the upstream, answered with the upstream's own status (429, 400, 503…) and its
 * message with secrets removed; 502/504 when it could not be reached or did not answer in time.
 */
export class UpstreamError extends AppError {
  readonly status: number;
  readonly type: ErrorType;
  constructor(status: number, message: string, code: string | null, headers: Record<string, string> = {}) {
    super(message, { code: code ?? 'upstream_error', headers });
    this.status = status;
    this.type = status === 429 ? 'rate_limit_error' : status >= 500 ? 'server_error' : status === 401 || status === 403 ? 'permission_error' : 'invalid_request_error';
  }
}
