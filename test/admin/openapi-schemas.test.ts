import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import Fastify, { type FastifyInstance, type InjectOptions } from 'fastify';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { lazySerializerBuilder, lazyValidatorBuilder } from '../../src/http/plugins/lazy-schemas.js';
import { openApiPath } from '../../src/http/admin/openapi.js';

interface Parameter {
  in: string;
  name: string;
  required: boolean;
  schema: Record<string, unknown>;
}
interface Operation {
  tags: string[];
  summary?: string;
  parameters?: Parameter[];
  requestBody?: { required: boolean; content: Record<string, { schema: unknown }> };
  security?: unknown;
  responses: Record<string, { description: string }>;
}
interface Document {
  openapi: string;
  info: { title: string };
  components: { securitySchemes: Record<string, unknown> };
  paths: Record<string, Record<string, Operation>>;
}

describe('the admin OpenAPI document and lazily compiled route schemas', () => {
  let ts: TestServer;
  let doc: Document;
  before(async () => {
    ts = await startTestServer({ dialect: 'sqlite' });
    const r = await ts.app.inject({ method: 'GET', url: '/auth/admin/openapi.json' });
    assert.equal(r.statusCode, 200);
    doc = r.json() as Document;
  });
  after(() => ts.close());

  test('URL parameters become OpenAPI path templates', () => {
    assert.equal(openApiPath('/auth/admin/realms/:realm/users/:id/role-mappings/realm'), '/auth/admin/realms/{realm}/users/{id}/role-mappings/realm');
    assert.equal(openApiPath('/a/:id(^\\d+)/b'), '/a/{id}/b');
  });

  test('every admin operation is listed with its path and query parameters, body, security and responses', async () => {
    assert.equal(doc.openapi, '3.0.3');
    assert.deepEqual(doc.components.securitySchemes.bearer, { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' });
    const paths = Object.keys(doc.paths);
    assert.ok(paths.length >= 30, paths.join(', '));
    for (const p of paths) {
      assert.ok(p.startsWith('/auth/admin/'), `${p}: only admin routes`);
      assert.ok(!p.includes(':'), `${p}: no :param left`);
      for (const [method, op] of Object.entries(doc.paths[p]!)) {
        assert.ok(['get', 'post', 'put', 'delete'].includes(method), `${method} ${p}`);
        assert.ok(op.tags.length > 0 && op.summary, `${method} ${p}: tags and summary`);
        assert.deepEqual(op.security, [{ bearer: [] }], `${method} ${p}: bearer security`);
        // Each {param} of the path is a required path parameter.
        const named = [...p.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]);
        const inPath = (op.parameters ?? []).filter((x) => x.in === 'path');
        assert.deepEqual(inPath.map((x) => x.name).sort(), named.sort(), `${method} ${p}: path parameters`);
        for (const x of inPath) assert.equal(x.required, true);
      }
    }
    const list = doc.paths['/auth/admin/realms/{realm}/users']!.get!;
    const max = list.parameters!.find((x) => x.in === 'query' && x.name === 'max')!;
    assert.deepEqual(max, { schema: { type: 'integer', minimum: 0, maximum: 1000 }, in: 'query', name: 'max', required: false });
    const update = doc.paths['/auth/admin/realms/{realm}/users/{id}']!.put!;
    assert.deepEqual(update.requestBody, { required: true, content: { 'application/json': { schema: { type: 'object', additionalProperties: true } } } });
    assert.deepEqual(update.responses, { 204: { description: 'Done' } });
    assert.deepEqual(doc.paths['/auth/admin/realms']!.get!.responses, { 200: { description: 'Default Response' } });
    // Keycloak's protocol-mapper routes, under clients and client scopes.
    for (const owner of ['clients', 'client-scopes']) {
      const base = `/auth/admin/realms/{realm}/${owner}/{id}/protocol-mappers`;
      assert.deepEqual(Object.keys(doc.paths[`${base}/models`]!).sort(), ['get', 'post']);
      assert.deepEqual(Object.keys(doc.paths[`${base}/models/{mapperId}`]!).sort(), ['delete', 'get', 'put']);
      assert.deepEqual(Object.keys(doc.paths[`${base}/protocol/{protocol}`]!), ['get']);
      assert.equal((doc.paths[`${base}/add-models`]!.post!.requestBody!.content['application/json']!.schema as { type: string }).type, 'array');
    }
    // Keycloak's realm localization: a text is text/plain both ways.
    const text = doc.paths['/auth/admin/realms/{realm}/localization/{locale}/{key}']!;
    assert.deepEqual(Object.keys(text).sort(), ['delete', 'get', 'put']);
    assert.deepEqual(text.put!.requestBody, { required: true, content: { 'text/plain': { schema: { type: 'string' } } } });
    assert.deepEqual(text.get!.responses, { 200: { description: 'The text', content: { 'text/plain': { schema: { type: 'string' } } } } });
    assert.deepEqual(Object.keys(doc.paths['/auth/admin/realms/{realm}/localization/{locale}']!).sort(), ['delete', 'get', 'post']);
    // Keycloak's client initial access tokens: create (201 with the token), list, delete.
    assert.deepEqual(Object.keys(doc.paths['/auth/admin/realms/{realm}/clients-initial-access']!).sort(), ['get', 'post']);
    assert.deepEqual(Object.keys(doc.paths['/auth/admin/realms/{realm}/clients-initial-access']!.post!.responses), ['201']);
    assert.deepEqual(Object.keys(doc.paths['/auth/admin/realms/{realm}/clients-initial-access/{id}']!), ['delete']);
    // Built once, then served as it is.
    const again = await ts.app.inject({ method: 'GET', url: '/auth/admin/openapi.json' });
    assert.deepEqual(again.json(), doc);
  });

  test("every documented operation's schemas compile: validation runs (before authentication) without a server error", async () => {
    for (const [p, ops] of Object.entries(doc.paths)) {
      for (const [method, op] of Object.entries(ops)) {
        const url = p.replace(/\{[^}]+\}/g, 'x');
        // A body the schema accepts: a list where the schema wants one (add-models), else an object.
        const schema = op.requestBody?.content['application/json']?.schema as { type?: string } | undefined;
        // A text/plain body (a localization text) is a string.
        const text = op.requestBody?.content['text/plain'] !== undefined;
        const payload = text ? 'a text' : schema?.type === 'array' ? [] : {};
        const r = await ts.app.inject({ method: method.toUpperCase() as 'GET', url, ...(method === 'get' || method === 'delete' ? {} : { payload, ...(text ? { headers: { 'content-type': 'text/plain' } } : {}) }) });
        assert.equal(r.statusCode, 401, `${method} ${url}: ${r.body}`);
      }
    }
  });

  test('a lazily compiled validator refuses a bad request with the 400 the admin API always gave', async () => {
    for (let i = 0; i < 2; i++) {
      const r = await ts.app.inject({ method: 'GET', url: '/auth/admin/realms/test/users?max=5000' });
      assert.equal(r.statusCode, 400, r.body);
      assert.deepEqual(r.json(), { error: 'invalid_request', errorMessage: 'invalid request: querystring/max must be <= 1000' });
      const body = await ts.app.inject({ method: 'PUT', url: '/auth/admin/realms/test', headers: { 'content-type': 'application/json' }, payload: '"a string"' });
      assert.equal(body.statusCode, 400, body.body);
      assert.deepEqual(body.json(), { error: 'invalid_request', errorMessage: 'invalid request: body must be object' });
    }
  });
});

/** The same routes over Fastify's own compilers and over the lazy ones answer the same, byte for byte. */
describe('lazy schema compilers behave as Fastify’s own', () => {
  const apps: FastifyInstance[] = [];
  function makeApp(lazy: boolean): FastifyInstance {
    const app = Fastify(lazy ? { schemaController: { compilersFactory: { buildValidator: lazyValidatorBuilder(), buildSerializer: lazySerializerBuilder() } } } : {});
    const schema = {
      params: { type: 'object', properties: { id: { type: 'integer' } }, required: ['id'] },
      querystring: { type: 'object', properties: { tags: { type: 'array', items: { type: 'string' } }, n: { type: 'integer', default: 7 }, flag: { type: 'boolean' } } },
      body: { type: 'object', properties: { name: { type: 'string', minLength: 2 }, count: { type: 'number' } }, required: ['name'], additionalProperties: false },
      response: { 200: { type: 'object', properties: { id: { type: 'integer' }, query: { type: 'object', additionalProperties: true }, body: { type: 'object', additionalProperties: true } } } },
    };
    app.post('/items/:id', { schema }, async (req) => ({ id: (req.params as { id: number }).id, query: req.query, body: req.body, secret: 'not serialized' }));
    app.put('/list', { schema: { body: { type: 'array', items: { type: 'integer' } } } }, async (req) => ({ body: req.body }));
    apps.push(app);
    return app;
  }
  after(async () => {
    for (const app of apps) await app.close();
  });

  test('validation errors, coercion, defaults and serialization are the same', async () => {
    const eager = makeApp(false);
    const lazy = makeApp(true);
    const requests = [
      { method: 'POST', url: '/items/12?tags=a&n=3&flag=true', payload: { name: 'ok', count: '4' } },
      { method: 'POST', url: '/items/12?tags=a&tags=b', payload: { name: 'ok' } },
      { method: 'POST', url: '/items/abc', payload: { name: 'ok' } },
      { method: 'POST', url: '/items/1?n=x', payload: { name: 'ok' } },
      { method: 'POST', url: '/items/1', payload: { name: 'o' } },
      { method: 'POST', url: '/items/1', payload: { count: 1 } },
      { method: 'POST', url: '/items/1', payload: { name: 'ok', extra: true } },
      { method: 'PUT', url: '/list', payload: [1, '2'] },
      { method: 'PUT', url: '/list', payload: '5', headers: { 'content-type': 'application/json' } },
      { method: 'PUT', url: '/list', payload: { a: 1 } },
    ] as const satisfies readonly InjectOptions[];
    for (let round = 0; round < 2; round++) {
      for (const req of requests) {
        const [a, b] = await Promise.all([eager.inject(req), lazy.inject(req)]);
        assert.equal(b.statusCode, a.statusCode, `${req.method} ${req.url}`);
        assert.equal(b.body, a.body, `${req.method} ${req.url}`);
      }
    }
    // The cases above do reach both outcomes.
    assert.equal((await lazy.inject(requests[0])).statusCode, 200);
    assert.equal((await lazy.inject(requests[4])).statusCode, 400);
  });
});
