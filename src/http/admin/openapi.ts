import type { FastifyInstance, RouteOptions } from 'fastify';

/**
 * The admin API's OpenAPI 3 document, built from the schemas of its tagged routes (the admin routes: the
 * protocol endpoints carry no tags). Routes are collected as they are added (an onRoute hook) and the
 * document is built on its first request, then kept: @fastify/swagger did the same work, with a YAML
 * library and a schema resolver, at every start, for a document few processes are ever asked for.
 */

declare module 'fastify' {
  /** What a route's schema may say for the OpenAPI document (the admin routes say it). */
  interface FastifySchema {
    /** Only tagged routes are in the document. */
    tags?: readonly string[];
    summary?: string;
    description?: string;
    security?: ReadonlyArray<{ [scheme: string]: readonly string[] }>;
    /** The media type of the body and of the 200 response when not JSON (a text/plain localization text). */
    consumes?: readonly string[];
    produces?: readonly string[];
  }
}

interface JsonSchema {
  type?: string;
  description?: string;
  properties?: Record<string, JsonSchema>;
  required?: readonly string[];
  [k: string]: unknown;
}

interface RouteSchema {
  tags?: readonly string[];
  summary?: string;
  description?: string;
  params?: JsonSchema;
  querystring?: JsonSchema;
  body?: JsonSchema;
  response?: Record<string, JsonSchema>;
  security?: readonly Record<string, readonly string[]>[];
  consumes?: readonly string[];
  produces?: readonly string[];
}

interface Operation {
  method: string;
  path: string;
  schema: RouteSchema;
}

export interface OpenApiInfo {
  info: { title: string; version: string };
  securitySchemes: Record<string, object>;
}

/** `/realms/:realm/users/:id` -> `/realms/{realm}/users/{id}` (a parameter's regular expression dropped). */
export function openApiPath(url: string): string {
  return url.replace(/:([A-Za-z0-9_]+)(\([^)]*\))?/g, '{$1}');
}

function parameters(where: 'path' | 'query', schema: JsonSchema | undefined): object[] {
  const required = new Set(schema?.required ?? []);
  return Object.entries(schema?.properties ?? {}).map(([name, s]) => ({ schema: s, in: where, name, required: where === 'path' || required.has(name) }));
}

function responses(schema: RouteSchema['response'], mediaType = 'application/json'): Record<string, object> {
  if (!schema) return { 200: { description: 'Default Response' } };
  const out: Record<string, object> = {};
  for (const [status, s] of Object.entries(schema)) {
    const { description = 'Default Response', ...body } = s;
    // A `null` body is no body: only the description.
    out[status] = body.type === 'null' ? { description } : { description, content: { [mediaType]: { schema: body } } };
  }
  return out;
}

function operation(op: Operation): object {
  const { schema } = op;
  const pathParams = parameters('path', schema.params);
  // Parameters in the URL that the schema does not describe are strings all the same.
  for (const m of op.path.matchAll(/\{([^}]+)\}/g)) {
    if (!pathParams.some((p) => (p as { name: string }).name === m[1])) pathParams.push({ schema: { type: 'string' }, in: 'path', name: m[1], required: true });
  }
  const params = [...parameters('query', schema.querystring), ...pathParams];
  return {
    ...(schema.summary !== undefined ? { summary: schema.summary } : {}),
    ...(schema.description !== undefined ? { description: schema.description } : {}),
    tags: schema.tags,
    ...(schema.body !== undefined ? { requestBody: { required: true, content: { [schema.consumes?.[0] ?? 'application/json']: { schema: schema.body } } } } : {}),
    ...(params.length > 0 ? { parameters: params } : {}),
    ...(schema.security !== undefined ? { security: schema.security } : {}),
    responses: responses(schema.response, schema.produces?.[0]),
  };
}

/**
 * Collects the tagged routes added to `app` from now on (its child plugins included) and returns the
 * function that builds, once, their OpenAPI 3 document.
 */
export function collectOpenApi(app: FastifyInstance, meta: OpenApiInfo): () => object {
  const operations: Operation[] = [];
  app.addHook('onRoute', (route: RouteOptions) => {
    const schema = route.schema as RouteSchema | undefined;
    if (!schema?.tags?.length) return;
    for (const method of [route.method].flat()) {
      // HEAD routes are the ones Fastify adds beside each GET.
      if (method === 'HEAD') continue;
      operations.push({ method: method.toLowerCase(), path: openApiPath(route.url), schema });
    }
  });
  let document: object | undefined;
  return () => {
    if (document) return document;
    const paths: Record<string, Record<string, object>> = {};
    for (const op of operations) (paths[op.path] ??= {})[op.method] = operation(op);
    document = { openapi: '3.0.3', info: meta.info, components: { securitySchemes: meta.securitySchemes, schemas: {} }, paths };
    return document;
  };
}
