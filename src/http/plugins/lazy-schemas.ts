import AjvCompiler from '@fastify/ajv-compiler';
import { SerializerSelector } from '@fastify/fast-json-stringify-compiler';

/**
 * Fastify's own schema compilers (@fastify/ajv-compiler, @fastify/fast-json-stringify-compiler, with the
 * options Fastify gives them), but each route's validator or serializer is compiled on the route's first
 * request instead of at start: compiling ~70 admin route schemas, and ajv's meta-schema before them, took
 * more than 100 ms of every start, for routes most processes never serve. Behaviour is Fastify's: same ajv
 * instance and options, same validators; only the moment of compilation changes (an invalid schema now
 * fails at its first request; test/admin/openapi-schemas.test.ts sends one to every admin route).
 */

type ValidatorBuilder = ReturnType<typeof AjvCompiler>;
type SerializerBuilder = ReturnType<typeof SerializerSelector>;
type Validate = ((...args: unknown[]) => unknown) & { errors?: unknown; schemaEnv?: unknown };

/** buildValidator for Fastify's schemaController.compilersFactory. */
export function lazyValidatorBuilder(): ValidatorBuilder {
  const build = AjvCompiler();
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
  const build = SerializerSelector();
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
