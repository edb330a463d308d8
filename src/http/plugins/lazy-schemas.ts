import { createRequire } from 'node:module';
import type AjvCompilerModule from '@fastify/ajv-compiler';
import type { SerializerSelector as SerializerSelectorFn } from '@fastify/fast-json-stringify-compiler';

/**
 * Fastify's own schema compilers (@fastify/ajv-compiler, @fastify/fast-json-stringify-compiler, with the
 * options Fastify gives them), but each route's validator or serializer is compiled on the route's first
 * request instead of at start: compiling ~70 admin route schemas, and ajv's meta-schema before them, took
 * more than 100 ms of every start, for routes most processes never serve. Behaviour is Fastify's: same ajv
 * instance and options, same validators; only the moment of compilation changes (an invalid schema now
 * fails at its first request; test/admin/openapi-schemas.test.ts sends one to every admin route).
 *
 * The compilers' modules themselves (ajv, fast-json-stringify and their dependencies, ~220 KB of code) are
 * loaded at that first compilation too, from node_modules (scripts/bundle.mjs keeps them out of the
 * bundle): an idle server never validates a request, and held their code and module state for nothing
 * (bench:startup on 2026-11-29, median of 7: idle RSS 59.6 -> 58.8 MB, ready 209 -> 168 ms; the bundle 1.88 ->
 * 1.62 MB).
 */
const load = createRequire(import.meta.url);

type ValidatorBuilder = ReturnType<typeof AjvCompilerModule>;
type SerializerBuilder = ReturnType<typeof SerializerSelectorFn>;
type Validate = ((...args: unknown[]) => unknown) & { errors?: unknown; schemaEnv?: unknown };

/** buildValidator for Fastify's schemaController.compilersFactory. */
export function lazyValidatorBuilder(): ValidatorBuilder {
  let builder: ValidatorBuilder | undefined;
  const build: ValidatorBuilder = (...args) => (builder ??= (load('@fastify/ajv-compiler') as typeof AjvCompilerModule)())(...args);
  const lazyBuild = (externalSchemas: Parameters<ValidatorBuilder>[0], options: Parameters<ValidatorBuilder>[1]): ReturnType<ValidatorBuilder> => {
    // The ajv instance itself (and its meta-schema) is made only when a first route is validated.
    let compiler: ReturnType<ValidatorBuilder> | undefined;
    const lazyCompiler = (route: Parameters<ReturnType<ValidatorBuilder>>[0]): Validate => {
      let compiled: Validate | undefined;
      const real = (): Validate => (compiled ??= (compiler ??= build(externalSchemas, options))(route) as unknown as Validate);
      const validate = function (this: unknown, ...args: unknown[]): unknown {
        return real().apply(this, args);
      } as Validate;
      // Fastify reads these from the function it was given: `schemaEnv` (an ajv validator; it then passes
      // parentData so a root value can be coerced) just before the call, `errors` just after it.
      Object.defineProperty(validate, 'errors', { get: () => real().errors, set: (v: unknown) => (real().errors = v as never) });
      Object.defineProperty(validate, 'schemaEnv', { get: () => real().schemaEnv });
      return validate;
    };
    return lazyCompiler as unknown as ReturnType<ValidatorBuilder>;
  };
  return lazyBuild as unknown as ValidatorBuilder;
}

/** buildSerializer for Fastify's schemaController.compilersFactory. */
export function lazySerializerBuilder(): SerializerBuilder {
  let builder: SerializerBuilder | undefined;
  const build: SerializerBuilder = (...args) => (builder ??= (load('@fastify/fast-json-stringify-compiler') as { SerializerSelector: typeof SerializerSelectorFn }).SerializerSelector())(...args);
  const lazyBuild = (externalSchemas: Parameters<SerializerBuilder>[0], options: Parameters<SerializerBuilder>[1]): ReturnType<SerializerBuilder> => {
    let compiler: ReturnType<SerializerBuilder> | undefined;
    const lazyCompiler = (route: Parameters<ReturnType<SerializerBuilder>>[0]): ((data: unknown) => string) => {
      let serialize: ((data: unknown) => string) | undefined;
      return (data: unknown): string => (serialize ??= (compiler ??= build(externalSchemas, options))(route))(data);
    };
    return lazyCompiler as ReturnType<SerializerBuilder>;
  };
  return lazyBuild as SerializerBuilder;
}
