import type { FastifyBaseLogger } from 'fastify';
import type { Bindings, ChildLoggerOptions } from 'fastify/types/logger.js';

type Level = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace';
/** The server's logger is pino's, which has isLevelEnabled (Fastify's own type leaves it out). */
type Logger = FastifyBaseLogger & { isLevelEnabled(level: string): boolean; bindings(): Bindings };

/**
 * A request's logger, made when the request first logs something it lets through. Fastify gives every
 * request a child of the server's logger bound to its id; pino builds a child by serializing its
 * bindings at once, which cost about 2 µs of the event loop per request (some 2% of a refresh grant),
 * while most requests log nothing. Every line a request writes still carries its id (`reqId`): the
 * child is the one Fastify would have made, only later.
 */
class LazyChildLogger {
  #child: Logger | undefined;
  constructor(
    private readonly parent: Logger,
    private readonly bindingsOf: Bindings,
    private readonly options: ChildLoggerOptions,
  ) {}

  private get real(): Logger {
    return (this.#child ??= this.parent.child(this.bindingsOf, this.options) as Logger);
  }

  private write(level: Level, args: unknown[]): void {
    // Below the level, pino's methods do nothing: nothing to make a child for.
    if (!(this.#child ?? this.parent).isLevelEnabled(level)) return;
    (this.real[level] as (...a: unknown[]) => void)(...args);
  }

  get level(): string {
    return (this.#child ?? this.parent).level;
  }
  set level(level: string) {
    this.real.level = level;
  }
  isLevelEnabled(level: string): boolean {
    return (this.#child ?? this.parent).isLevelEnabled(level);
  }
  fatal(...args: unknown[]): void {
    this.write('fatal', args);
  }
  error(...args: unknown[]): void {
    this.write('error', args);
  }
  warn(...args: unknown[]): void {
    this.write('warn', args);
  }
  info(...args: unknown[]): void {
    this.write('info', args);
  }
  debug(...args: unknown[]): void {
    this.write('debug', args);
  }
  trace(...args: unknown[]): void {
    this.write('trace', args);
  }
  silent(): void {}
  child(bindings: Bindings, options?: ChildLoggerOptions): FastifyBaseLogger {
    return this.real.child(bindings, options);
  }
  bindings(): Bindings {
    return this.real.bindings();
  }
}

/** Fastify's childLoggerFactory: a route with a log level of its own gets its child at once, as before. */
export function lazyChildLogger(logger: FastifyBaseLogger, bindings: Bindings, options: ChildLoggerOptions): FastifyBaseLogger {
  if (options.level !== undefined) return logger.child(bindings, options);
  return new LazyChildLogger(logger as Logger, bindings, options) as unknown as FastifyBaseLogger;
}
