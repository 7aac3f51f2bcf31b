import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import { getCORSHeadersByRequestAndOptions, normalizeNodeRequest, sendNodeResponse } from '@whatwg-node/server';
import type { YogaServerInstance } from 'graphql-yoga';
import type { RequestContext } from '../context.js';
import { InternalError } from '../errors.js';
import type { Runtime } from '../runtime.js';
import { finishResponse } from './edge.js';
import { rememberNodeBody } from './body-limit.js';
import { appErrorResponse } from './error-response.js';
import { requestIdOf } from './request-id.js';
import { isRestPath } from './served-paths.js';

/** The gateway's way in, for node:http (`listener`) and in-process callers (`fetch`). */
export interface FrontDoor {
  listener: RequestListener;
  fetch(request: Request): Promise<Response>;
}

/**
 * Where every request comes in: REST (`/v1`) goes to the REST layer with the edge's work around
 * it, anything else to Yoga (GraphQL, the operations endpoints, the console, 404s). A REST request
 * never meets Yoga's server adapter: its request and response hooks (a dozen plugins each way,
 * each step a promise, each hook handed an object of fresh closures) and its handler chain cost
 * a REST read up to a sixth of its CPU, for nothing a REST answer needs (GET /v1/collections/{id},
 * 20 children, server CPU per request, A/B in one process on a loaded 2-core machine: 1.23 → 1.05
 * ms in one run, 1.61 → 1.57 ms in another). What the adapter did for REST is done here the same way, with its
 * own functions: the Request built from node's request (its signal aborts when the client goes),
 * CORS as its default (`cors` unset in createYoga) answers it, the Response written to node's
 * response; the edge's own work is `finishResponse`, shared with Yoga's responses.
 */
export function frontDoor(
  runtime: Runtime,
  yoga: YogaServerInstance<Record<string, unknown>, RequestContext>,
  rest: (request: Request, url: URL) => Promise<Response>,
): FrontDoor {
  const finish = finishResponse(runtime);
  // Read once: every property of the Yoga instance is looked up through its adapter's proxy.
  const fetchAPI = yoga.fetchAPI;
  const customAbort = fetchAPI.Request !== globalThis.Request;
  const graphqlFetch = yoga.fetch;

  async function answerRest(request: Request, url: URL): Promise<Response> {
    // The request's clock starts with its id.
    const { id } = requestIdOf(request);
    let response: Response;
    if (request.method.toUpperCase() === 'OPTIONS') {
      // A CORS preflight, answered as Yoga answers one (Safari waits for a body without the length).
      response = new fetchAPI.Response(null, { status: 204, headers: { 'Content-Length': '0' } });
    } else {
      try {
        response = await rest(request, url);
      } catch (error) {
        runtime.logger.error({ err: error, requestId: id }, 'REST request failed');
        response = appErrorResponse(new InternalError(id));
      }
    }
    const cors = getCORSHeadersByRequestAndOptions(request, {});
    if (cors) for (const name in cors) response.headers.set(name, cors[name]);
    finish(request, response);
    return response;
  }

  return {
    listener(req: IncomingMessage, res: ServerResponse) {
      const url = restUrlOf(req.url ?? '/');
      if (!url) {
        void yoga(req, res);
        return;
      }
      // As Yoga's adapter does: the fetch API's Request over node's (custom abort controller when
      // the fetch API is the ponyfill), and the single-writeHead answer.
      const request = normalizeNodeRequest(req, fetchAPI, res, customAbort);
      if (req.method !== 'GET' && req.method !== 'HEAD') rememberNodeBody(request, req);
      answerRest(request, url)
        .then((response) => sendNodeResponse(response, res, req, true))
        .catch((error: unknown) => {
          runtime.logger.error({ err: error }, 'REST response could not be written');
          res.destroy();
        });
    },
    async fetch(request) {
      const url = new URL(request.url);
      return isRestPath(url.pathname) ? answerRest(request, url) : graphqlFetch(request);
    },
  };
}

/**
 * The URL of a REST request from node's request target, or null for any other path. A path is
 * parsed only when it could be REST: it starts with /v1, or it has what URL parsing rewrites (dot
 * segments, percent-encoded dots, backslashes) or is not origin-form, so that the same path goes
 * where Yoga's URL would have sent it.
 */
function restUrlOf(target: string): URL | null {
  const query = target.indexOf('?');
  const path = query === -1 ? target : target.slice(0, query);
  if (path.startsWith('/') && !path.startsWith('/v1') && !/[.%\\]/.test(path)) return null;
  const url = new URL(target, 'http://localhost');
  return isRestPath(url.pathname) ? url : null;
}
