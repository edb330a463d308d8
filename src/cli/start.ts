import type { Command } from 'commander';
import { config, intArg, withStore } from './common.js';
import { describeDatabaseUrl } from '../config/data-dir.js';

export function registerStart(program: Command): void {
  program
    .command('start')
    .description('start the server (migrates the database first)')
    .option('--port <port>', 'TCP port (default: $PORT or 8080)', intArg('port', { min: 0, max: 65535 }))
    .option('--host <host>', 'interface to bind (default: $HOST or 127.0.0.1)')
    .option('--demo', 'on an empty database, create a demo realm, organization, user and client, and print them')
    .action(async (opts: { port?: number; host?: string; demo?: boolean }) => {
      const { startServer } = await import('../server.js');
      const { setupDemo } = await import('../admin/demo.js');
      const cfg = config({ ...(opts.port !== undefined ? { port: opts.port } : {}), ...(opts.host ? { host: opts.host } : {}) });
      process.stderr.write(`realmgate: database ${describeDatabaseUrl(cfg.databaseUrl)}\n`);
      const server = await startServer(cfg, {
        onReady: opts.demo ? (s) => setupDemo(s, (line) => process.stdout.write(line + '\n')) : undefined,
      });
      process.stdout.write(`Realmgate listening on ${server.url} (issuer base ${cfg.authUrl}/auth/realms/<realm>)\n`);
      let closing = false;
      const stop = (): void => {
        if (closing) return;
        closing = true;
        server.close().then(
          () => process.exit(0),
          () => process.exit(1),
        );
      };
      process.on('SIGINT', stop);
      process.on('SIGTERM', stop);
    });
  
  program
    .command('migrate')
    .description('apply pending database migrations and exit')
    .action(async () => {
      await withStore(async () => undefined);
      process.stdout.write('database is up to date\n');
    });
}
