import { createApp } from './app.js';
import { loadConfig } from './config.js';
import { createHttpServer } from './http/http-server.js';

/** The only file that listens: configuration from the environment, the app on a port, signals. */
const loaded = loadConfig();
if (!loaded.ok) {
  console.error(`Gatehouse cannot start: the configuration is invalid.\n${loaded.problems.map((p) => `  - ${p}`).join('\n')}`);
  process.exit(1);
}
const config = loaded.config;
const app = await createApp(config, { processMetrics: true }).catch((error: unknown) => {
  // A start that cannot succeed (an unreadable database or secret key) says why in one line.
  console.error(`Gatehouse cannot start: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
});
const log = app.runtime.logger;

if (app.bootstrapResult.generatedKey) {
  // Printed once, on the first start only: the key is stored hashed and cannot be shown again.
  console.log(`\nGatehouse created your first organisation API key (shown only this once):\n\n  ${app.bootstrapResult.generatedKey}\n\nSend it as the x-gateway-api-key header.\n`);
}

const { server, drain } = createHttpServer(app.yoga, config);
server.listen(config.PORT, config.HOST, () => {
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : config.PORT;
  log.info({ host: config.HOST, port }, `Gatehouse listening on http://${config.HOST}:${port} (GraphQL at /graphql, REST at /v1)`);
});

let stopping = false;
async function shutdown(signal: string): Promise<void> {
  if (stopping) return;
  stopping = true;
  const timer = setTimeout(() => {
    log.warn('shutdown timed out: closing remaining connections');
    server.closeAllConnections();
  }, config.SHUTDOWN_TIMEOUT_MS);
  timer.unref();
  // Stop taking requests on any connection, new or kept alive; in-flight ones finish.
  const drained = drain();
  // Logged once the listener is closed, so whoever reads this line finds new connections refused.
  log.info({ signal }, 'shutting down: no new requests, finishing in-flight ones');
  // Open SSE streams end now (they would otherwise never finish), then in-flight requests drain.
  app.runtime.beginShutdown();
  await drained;
  clearTimeout(timer);
  // Background work stops, then the database closes.
  await app.close();
  log.info('stopped');
  process.exit(0);
}
process.on('SIGTERM', () => void shutdown('SIGTERM'));
process.on('SIGINT', () => void shutdown('SIGINT'));
