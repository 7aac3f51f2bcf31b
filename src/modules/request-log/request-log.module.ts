import type { DomainModule } from '../module.js';
import { RequestLogSchema } from './request-log.entity.js';
import { requestLogWriter } from './request-log.writer.js';

/** The request log (request-log.writer.ts): its table, and the last batch written on stop. */
export const requestLogModule: DomainModule = {
  name: 'request-log',
  entities: [RequestLogSchema],
  start(runtime) {
    requestLogWriter(runtime);
  },
  async stop(runtime) {
    await requestLogWriter(runtime).flush();
  },
};
