import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import Fastify, { LogController } from 'fastify';
import pino from 'pino';
import { lazyChildLogger } from '../../src/http/plugins/lazy-child-logger.js';

/** A real pino logger writing parsed lines to `lines`, and how many children it has made. */
function logger(level: string): { lines: Array<Record<string, unknown>>; log: pino.Logger; children: () => number } {
  const lines: Array<Record<string, unknown>> = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      for (const l of chunk.toString().split('\n')) if (l.trim()) lines.push(JSON.parse(l) as Record<string, unknown>);
      done();
    },
  });
  const log = pino({ level }, sink);
  let made = 0;
  const child = log.child;
  // Counts the children pino is asked for, of this logger and of its children (which inherit it); each is
  // still pino's own.
  log.child = function (this: pino.Logger, ...args: Parameters<typeof child>) {
    made++;
    return child.apply(this, args);
  } as typeof log.child;
  return { lines, log, children: () => made };
}

async function app(log: pino.Logger) {
  const a = Fastify({ loggerInstance: log, childLoggerFactory: lazyChildLogger, logController: new LogController({ disableRequestLogging: true }) });
  a.get('/quiet', async () => ({ ok: true }));
  a.get('/debug', async (req) => {
    req.log.debug('below the level');
    return { ok: true };
  });
  a.get('/loud', async (req) => {
    req.log.info({ detail: 1 }, 'first');
    req.log.warn('second');
    req.log.child({ part: 'x' }).error('third');
    return { level: req.log.level, info: req.log.isLevelEnabled('info'), debug: req.log.isLevelEnabled('debug') };
  });
  await a.ready();
  return a;
}

describe('request loggers made on first use', () => {
  test('a request that logs nothing, or only below the level, costs no child logger', async () => {
    const { lines, log, children } = logger('info');
    const a = await app(log);
    try {
      const before = children();
      for (let i = 0; i < 5; i++) assert.equal((await a.inject({ url: '/quiet' })).statusCode, 200);
      assert.equal((await a.inject({ url: '/debug' })).statusCode, 200);
      assert.equal(children(), before);
      assert.deepEqual(lines, []);
    } finally {
      await a.close();
    }
  });

  test("every line a request logs carries its id, its child's lines too, and the level is the server's", async () => {
    const { lines, log, children } = logger('info');
    const a = await app(log);
    try {
      const before = children();
      const res = await a.inject({ url: '/loud' });
      assert.deepEqual(res.json(), { level: 'info', info: true, debug: false });
      // One child for the request, and the one the handler asked of it.
      assert.equal(children(), before + 2);
      const mine = lines.filter((l) => ['first', 'second', 'third'].includes(l.msg as string));
      assert.equal(mine.length, 3);
      const ids = new Set(mine.map((l) => l.reqId));
      assert.equal(ids.size, 1);
      assert.ok(typeof [...ids][0] === 'string' && ([...ids][0] as string).length > 0);
      assert.equal(mine[0]!.detail, 1);
      assert.equal(mine[2]!.part, 'x');
      assert.deepEqual(
        mine.map((l) => l.level),
        [30, 40, 50],
      );
      // Two requests, two ids.
      await a.inject({ url: '/loud' });
      const again = lines.filter((l) => l.msg === 'first');
      assert.notEqual(again[0]!.reqId, again[1]!.reqId);
    } finally {
      await a.close();
    }
  });

  test('at debug, a debug line is written with the id', async () => {
    const { lines, log } = logger('debug');
    const a = await app(log);
    try {
      await a.inject({ url: '/debug' });
      const line = lines.find((l) => l.msg === 'below the level');
      assert.ok(line && typeof line.reqId === 'string');
    } finally {
      await a.close();
    }
  });
});
