import { it } from 'vitest';
import { throwIfAborted, type ModelAdapter } from '../../src/modules/runs/models/model.js';
import { createTestApp } from '../helpers/app.js';
import { H, assistant, thread, useLocalModel } from '../unit/runs/run-fixtures.js';
const hanging: () => ModelAdapter = () => ({
  async *stream(req) {
    await new Promise((_resolve, reject) => req.signal?.addEventListener('abort', () => reject(req.signal!.reason), { once: true }));
    throwIfAborted(req.signal);
  },
});
it('dbg', async () => {
  const app = await createTestApp();
  useLocalModel(app, hanging);
  const a = await assistant(app, { tools: [] });
  const th = await thread(app, 'hang until shutdown');
  console.log('posting');
  const response = await app.app.fetch(new Request(`http://gatehouse.test/v1/threads/${th.id}/runs`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-gateway-api-key': app.key, ...H }, body: JSON.stringify({ assistant_id: a.id, stream: true }) }));
  console.log('got response', response.status);
  const reader = response.body!.getReader();
  let text = '';
  while (!text.includes('in_progress')) { const r = await reader.read(); console.log('chunk', r.done); if (r.done) break; text += new TextDecoder().decode(r.value); }
  console.log('seen in_progress');
  app.app.runtime.beginShutdown();
  for (;;) { const r = await reader.read(); console.log('after', r.done); if (r.done) break; }
  console.log('closing');
  const { runExecutor } = await import('../../src/modules/runs/executor.js');
  const ex = runExecutor(app.app.runtime) as any;
  console.log('jobs', [...ex.jobs.keys()], 'waiting', ex.waiting);
  const done = [...ex.jobs.values()][0]?.done;
  [...ex.jobs.values()][0]?.controller.abort(new Error('x'));
  await Promise.race([done, new Promise((r) => setTimeout(r, 1000))]);
  console.log('jobs after abort', [...ex.jobs.keys()]);
  console.log(await app.app.runtime.fork().getConnection().execute('select status from runs'));
  const rt = app.app.runtime as any;
  for (const m of [...rt.modules].reverse()) { console.log('stop', m.name); await Promise.race([m.stop?.(rt), new Promise((r) => setTimeout(() => r(console.log('STUCK', m.name)), 2000))]); }
  console.log('modules stopped');
  console.log('closed');
}, 8000);
