/**
 * A server in a child process, as the process tests start one (`src/server.ts` under tsx, `npm
 * start`, the built `dist/server.js`): its output collected, its exit awaited, and a wait until it
 * listens. Start-up is mostly loading and compiling the modules (several seconds under tsx), so on
 * a loaded 2-core machine it can take half a minute: the wait is generous, and the tests that start
 * servers give themselves STARTS_WITHIN per start.
 */
import { spawn, type ChildProcess, type SpawnOptions } from 'node:child_process';

/** How long a server may take to print that it listens. */
export const STARTS_WITHIN = 90_000;

export interface ServerProcess {
  child: ChildProcess;
  output: () => string;
  /** The exit code (null when ended by a signal). */
  exited: Promise<number | null>;
}

/**
 * Started in a process group of its own, so `killServer` reaches what it starts in turn (`npm
 * start` runs the server as its grandchild, which a signal to npm alone would leave running).
 */
export function spawnServer(command: string, args: string[], options: SpawnOptions): ServerProcess {
  const child = spawn(command, args, { ...options, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout!.on('data', (d) => (out += d));
  child.stderr!.on('data', (d) => (out += d));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return { child, output: () => out, exited };
}

const LISTENING = /listening on http:\/\/127\.0\.0\.1:(\d+)/;

/** Resolves with the port once the server says it listens; fails with its output if it exits first or takes longer than `ms`. */
export async function listeningPort(server: ServerProcess, name: string, ms = STARTS_WITHIN): Promise<number> {
  const until = Date.now() + ms;
  for (;;) {
    const listening = LISTENING.exec(server.output());
    if (listening) return Number(listening[1]);
    if (Date.now() > until || server.child.exitCode !== null) {
      killServer(server);
      throw new Error(`${name} did not start:\n${server.output()}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Kills the server's whole process group if it is still running (a test's cleanup, or a start that failed). */
export function killServer(server: ServerProcess): void {
  const { child } = server;
  if (child.pid === undefined || child.exitCode !== null || child.signalCode !== null) return;
  try {
    process.kill(-child.pid, 'SIGKILL');
  } catch {
    // Already gone.
  }
}
