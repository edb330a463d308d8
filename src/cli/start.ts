import os from 'node:os';
import cluster from 'node:cluster';
import type { Command } from 'commander';
import { CliError, config, intArg, withStore } from './common.js';
import { describeDatabaseUrl } from '../config/data-dir.js';

export function registerStart(program: Command): void {
  program
    .command('start')
    .description('start the server (migrates the database first)')
    .option('--port <port>', 'TCP port (default: $PORT or 8080)', intArg('port', { min: 0, max: 65535 }))
    .option('--host <host>', 'interface to bind (default: $HOST or 127.0.0.1)')
    .option('--workers <n>', 'server processes sharing the port (default: one per CPU core; 1: no cluster)', intArg('workers'))
    .option('--demo', 'on an empty database, create a demo realm, organization, user and client, and print them')
    .addHelpText('after', '\nSIGTERM, SIGINT or SIGHUP stop it gracefully: no new connections, the requests in flight answered, then exit 0.')
    .action(async (opts: { port?: number; host?: string; demo?: boolean; workers?: number }) => {
      const { startServer, STOP_SIGNALS } = await import('../server.js');
      const { setupDemo } = await import('../admin/demo.js');
      const cfg = config({ ...(opts.port !== undefined ? { port: opts.port } : {}), ...(opts.host ? { host: opts.host } : {}) });
      if (!cluster.isWorker) process.stderr.write(`realmgate: database ${describeDatabaseUrl(cfg.databaseUrl)}\n`);
      const workers = opts.workers ?? os.availableParallelism();
      if (workers < 1 || workers > 256) throw new CliError('--workers must be from 1 to 256');
      const demo = opts.demo ? (s: Parameters<typeof setupDemo>[0]) => setupDemo(s, (line) => process.stdout.write(line + '\n')) : undefined;
      const announce = (url: string): void => {
        process.stdout.write(`Realmgate listening on ${url} (issuer base ${cfg.authUrl}/auth/realms/<realm>${workers > 1 ? `, ${workers} workers` : ''})\n`);
      };

      if (workers > 1 && cluster.isPrimary) {
        const { runPrimary } = await import('../cluster.js');
        await runPrimary(cfg, { workers, ...(demo ? { onReady: demo } : {}), onListening: announce });
        return;
      }
      // A single process, or a worker of the cluster (the primary ran the demo set-up and serves metrics).
      const worker = cluster.isWorker;
      const server = await startServer(cfg, { ...(demo && !worker ? { onReady: demo } : {}), management: !worker });
      if (worker) (await import('../cluster.js')).workerReady(server.url);
      else announce(server.url);
      let closing = false;
      const stop = (): void => {
        if (closing) return;
        closing = true;
        // Said on stderr so that an operator (and the shutdown test) sees the drain begin.
        process.stderr.write(`Realmgate ${worker ? `worker ${process.pid} ` : ''}shutting down: finishing requests in flight\n`);
        server.close().then(
          () => process.exit(0),
          () => process.exit(1),
        );
      };
      for (const signal of STOP_SIGNALS) process.on(signal, stop);
    });

  program
    .command('migrate')
    .description('apply pending database migrations and exit')
    .action(async () => {
      await withStore(async () => undefined, { access: 'create' });
      process.stdout.write('database is up to date\n');
    });
}
