import fs from 'node:fs';

/** Makes what has been committed so far durable; resolves once it is on disk. `close` lets go of the WAL's descriptor. */
export type WalSync = (() => Promise<void>) & { close(): Promise<void> };

/**
 * synchronous=FULL's one extra step, taken off the event loop. In WAL mode FULL differs from NORMAL only
 * by a sync of the WAL file after each commit (https://sqlite.org/pragma.html#pragma_synchronous: under
 * NORMAL "the WAL file is synchronized before each checkpoint and the database file is synchronized after
 * each completed checkpoint ... but no sync operations occur during most transactions"). NORMAL keeps the
 * database consistent through a power loss but may lose the last commits: a commit under NORMAL followed
 * by an fdatasync of the WAL is as durable as a commit under FULL, and the sync can run in libuv's thread
 * pool while the event loop goes on with the next requests.
 *
 * The WAL is written in order and a frame counts only when every frame before it is valid, so one sync
 * makes every earlier commit durable too. Syncs are coalesced: while one runs, callers whose commits came
 * after it started wait for the next one, which starts as soon as it ends (group commit of the syncs).
 */
/** fdatasync through node:fs's callback API: its dispatch costs the event loop about half of FileHandle.datasync()'s. */
function fdatasync(fd: number): Promise<void> {
  return new Promise((resolve, reject) => fs.fdatasync(fd, (err) => (err ? reject(err) : resolve())));
}

function openFd(file: string): Promise<number> {
  return new Promise((resolve, reject) => fs.open(file, 'r+', (err, fd) => (err ? reject(err) : resolve(fd))));
}

export function walSync(walPath: string, syncFd: (fd: number) => Promise<void> = fdatasync): WalSync {
  let handle: Promise<number> | undefined;
  let running = false;
  let inflight: Promise<void> | undefined;
  let next: { promise: Promise<void>; resolve: () => void; reject: (e: unknown) => void } | undefined;

  async function once(): Promise<void> {
    try {
      await syncFd(await (handle ??= openFd(walPath)));
    } catch (err) {
      // Opened again on the next call (the WAL is recreated when the last connection to it closes).
      const h = handle;
      handle = undefined;
      void h?.then((fd) => fs.close(fd, () => undefined)).catch(() => undefined);
      throw err;
    }
  }

  function start(waiters: NonNullable<typeof next>): void {
    running = true;
    inflight = once();
    inflight.then(waiters.resolve, waiters.reject).finally(() => {
      running = false;
      const queued = next;
      next = undefined;
      if (queued) start(queued);
    });
  }

  const sync = (): Promise<void> => {
    if (!next) {
      let resolve!: () => void;
      let reject!: (e: unknown) => void;
      const promise = new Promise<void>((res, rej) => {
        resolve = res;
        reject = rej;
      });
      next = { promise, resolve, reject };
    }
    const mine = next.promise;
    if (!running) {
      const queued = next;
      next = undefined;
      start(queued);
    }
    return mine;
  };
  return Object.assign(sync, {
    async close(): Promise<void> {
      // Never under a sync in flight (or queued behind it): the descriptor could be another file's by then.
      while (running || next) await (next?.promise ?? inflight)?.catch(() => undefined);
      const h = handle;
      handle = undefined;
      const fd = await h?.catch(() => undefined);
      if (fd !== undefined) await new Promise<void>((resolve) => fs.close(fd, () => resolve()));
    },
  });
}
