import { runCli } from './cli/commands.js';

/** `npm run cli -- <command>` and the `gatehouse` bin. */
process.exitCode = await runCli(process.argv.slice(2));
