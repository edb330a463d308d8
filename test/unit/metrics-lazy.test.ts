import { test } from 'node:test';
import assert from 'node:assert/strict';
import { metrics, registry } from '../../src/metrics.js';

// prom-client loads after start (src/metrics.ts): what is recorded before it has loaded is not lost.
test('metrics recorded before prom-client has loaded are counted, in order, once it has', async () => {
  metrics.grants.inc({ grant_type: 'refresh_token', outcome: 'success' });
  metrics.grants.inc({ grant_type: 'refresh_token', outcome: 'success' });
  metrics.collectorDeleted.inc({ table: 'codes' }, 5);
  metrics.clientAuthFailures.inc();
  metrics.batchSize.observe(3);
  metrics.requestDuration.observe({ route: '/x', method: 'GET', status: '200' }, 0.002);
  metrics.collectorLastRun.set(1);
  metrics.collectorLastRun.set(42);
  const text = await registry.metrics();
  assert.match(text, /^realmgate_grants_total\{grant_type="refresh_token",outcome="success"\} 2$/m);
  assert.match(text, /^realmgate_collector_deleted_rows_total\{table="codes"\} 5$/m);
  assert.match(text, /^realmgate_client_auth_failures_total 1$/m);
  assert.match(text, /^realmgate_sqlite_group_commit_batch_size_count 1$/m);
  assert.match(text, /^realmgate_http_request_duration_seconds_bucket\{le="0.0025",route="\/x",method="GET",status="200"\} 1$/m);
  assert.match(text, /^realmgate_collector_last_run_timestamp_seconds 42$/m);
  assert.equal(registry.contentType, 'text/plain; version=0.0.4; charset=utf-8');
  // Once loaded, recorded at once.
  metrics.clientAuthFailures.inc();
  assert.equal((await metrics.clientAuthFailures.get()).values[0]?.value, 2);
});
