#!/usr/bin/env node
// The realmgate command: src/cli/run.ts holds the commands; this process runs one and exits with its status.
import { runCli } from './cli/run.js';

// A reader of this process's output that went away (a log shipper restarted, `| head`, a closed
// terminal): the server keeps serving and a command finishes, their lines dropped. Unhandled, the EPIPE
// ended the server, or froze it at exit while pino retried its buffered lines for ever.
for (const stream of [process.stdout, process.stderr]) {
  stream.on('error', (err: NodeJS.ErrnoException) => {
    if (err.code !== 'EPIPE') throw err;
  });
}

void runCli(process.argv).then((status) => {
  if (status !== undefined) process.exit(status);
});
