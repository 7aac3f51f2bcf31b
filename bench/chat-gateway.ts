import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { join } from 'node:path';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { listen, mainThreadCpuMs, notingAnswers, processCpuMs } from './lib.js';

// The production build when bench/chat.ts built it (GATEHOUSE_BUILD, bench/lib.ts gatehouseBuild), else the sources.
const code = new URL(process.env.GATEHOUSE_BUILD === 'dist' ? '../dist/src/' : '../src/', import.meta.url);
const { createApp } = (await import(new URL('app.js', code).href)) as typeof import('../src/app.js');
const { configFrom } = (await import(new URL('config.js', code).href)) as typeof import('../src/config.js');
const { createHttpServer } = (await import(new URL('http/http-server.js', code).href)) as typeof import('../src/http/http-server.js');

/**
 * The gateway of bench/chat.ts, in its own process as a deployment runs it (the client and the fake
 * upstream stay in the bench's process, so the gateway's CPU is not charged against their core).
 * Started with an IPC channel (child_process.fork); it sends `{ ready: <base URL> }` once it
 * listens, then answers the bench's questions, each `{ id, op }` answered `{ id, ... }`:
 *
 * - `cpu`: this process's CPU so far (processCpuMs, ms) and its main thread's (`main`, mainThreadCpuMs);
 * - `count`: starts recording the SQL statements sent (the runtime's onQuery hook);
 * - `counted`: stops, and answers them with how many had been sent when the last answer was ended;
 * - `profile` (`{ dir, name, heap? }`): starts a CPU profile of this process (the inspector's
 *   profiler), or with `heap` (`all` or `survivors`) a sampling heap profile: what is allocated, by
 *   stack (`survivors`: only what outlived a scavenge);
 * - `profiled`: stops it and writes it to `<dir>/<name>.cpuprofile` (`.heapprofile`);
 * - `stop`: closes the server and the app, then exits.
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

/** A young-generation collection on demand (the gc function V8 exposes once asked to). */
function minorGc(): void {
  setFlagsFromString('--expose-gc');
  (runInNewContext('gc') as (options: { type: 'minor' }) => void)({ type: 'minor' });
}

type Question = { id: number; op: 'cpu' | 'count' | 'counted' | 'profile' | 'profiled' | 'stop'; dir?: string; name?: string; heap?: string };
let profiling: { session: Session; file: string; heap: boolean } | null = null;
process.on('message', async ({ id, op, dir, name, heap }: Question) => {
  if (op === 'cpu') process.send!({ id, cpu: processCpuMs(), main: mainThreadCpuMs?.() ?? NaN });
  else if (op === 'count') {
    statements = [];
    process.send!({ id });
  } else if (op === 'counted') {
    process.send!({ id, statements, answered });
    statements = null;
  } else if (op === 'profile') {
    const session = new Session();
    session.connect();
    // Every allocation sampled, or (`survivors`) only those that outlived a scavenge.
    if (heap) await session.post('HeapProfiler.startSampling', { samplingInterval: 1024, includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: heap !== 'survivors' });
    else {
      await session.post('Profiler.enable');
      await session.post('Profiler.start');
    }
    profiling = { session, file: join(dir!, `${name}.${heap ? 'heapprofile' : 'cpuprofile'}`), heap: Boolean(heap) };
    process.send!({ id });
  } else if (op === 'profiled') {
    // Objects still in the young generation when sampling stops are reported as alive: up to a
    // whole semi-space of garbage (64 MB, hundreds of requests') that no scavenge has looked at
    // yet. A scavenge first leaves only what outlived one (or lives on).
    if (profiling!.heap) minorGc();
    const { profile } = profiling!.heap ? await profiling!.session.post('HeapProfiler.stopSampling') : await profiling!.session.post('Profiler.stop');
    writeFileSync(profiling!.file, JSON.stringify(profile));
    profiling!.session.disconnect();
    process.send!({ id, file: profiling!.file });
    profiling = null;
  } else if (op === 'stop') {
    server.closeAllConnections();
    server.close();
    await app.close();
    process.exit(0);
  }
});
process.send!({ ready: url });
