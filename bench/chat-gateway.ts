import { createApp } from '../src/app.js';
import { configFrom } from '../src/config.js';
import { createHttpServer } from '../src/http/http-server.js';
import { listen, mainThreadCpuMs, notingAnswers, processCpuMs } from './lib.js';

/**
 * The gateway of bench/chat.ts, in its own process as a deployment runs it (the client and the fake
 * upstream stay in the bench's process, so the gateway's CPU is not charged against their core).
 * Started with an IPC channel (child_process.fork); it sends `{ ready: <base URL> }` once it
 * listens, then answers the bench's questions, each `{ id, op }` answered `{ id, ... }`:
 *
 * - `cpu`: this process's CPU so far (processCpuMs, ms) and its main thread's (`main`, mainThreadCpuMs);
 * - `count`: starts recording the SQL statements sent (the runtime's onQuery hook);
 * - `counted`: stops, and answers them with how many had been sent when the last answer was ended;
 * - `stop`: closes the server and the app, then exits (which writes a --cpu-prof profile).
 */
const { url: databaseUrl, key } = JSON.parse(process.argv[2]!) as { url: string; key: string };

let statements: string[] | null = null;
const app = await createApp(configFrom({ DATABASE_URL: databaseUrl, LOG_LEVEL: 'silent', GATEWAY_BOOTSTRAP_API_KEY: key }), {
  onQuery: (sql) => statements?.push(sql),
});
// How many statements had run when the gateway ended its answer (the rest come after it).
let answered = 0;
// The listener npm start uses (src/server.ts), the app behind a handler noting each answer's end.
const { server } = createHttpServer(
  notingAnswers(app.yoga, () => (answered = statements?.length ?? 0)),
  app.runtime.config,
);
const url = await listen(server);

type Question = { id: number; op: 'cpu' | 'count' | 'counted' | 'stop' };
process.on('message', async ({ id, op }: Question) => {
  if (op === 'cpu') process.send!({ id, cpu: processCpuMs(), main: mainThreadCpuMs?.() ?? NaN });
  else if (op === 'count') {
    statements = [];
    process.send!({ id });
  } else if (op === 'counted') {
    process.send!({ id, statements, answered });
    statements = null;
  } else if (op === 'stop') {
    server.closeAllConnections();
    server.close();
    await app.close();
    process.exit(0);
  }
});
process.send!({ ready: url });
