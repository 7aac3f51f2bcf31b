/** The documented error envelope, as a test expects it whole: `{ error: { message, type, param, code } }`. */
export function error(message: string, param: string | null = null, code: string | null = null, type = 'invalid_request_error') {
  return { error: { message, type, param, code } };
}

/** A whole failed response as tests compare it: the status and the envelope. */
export function errorResponse(status: number, message: string, param: string | null = null, code: string | null = null, type = 'invalid_request_error') {
  return { status, body: error(message, param, code, type) };
}
