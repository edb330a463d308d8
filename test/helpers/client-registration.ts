import assert from 'node:assert/strict';
import { REALM, PASSWORD, type TestServer } from './server.js';
import { tokenRequest } from './flow.js';
import { createClient, createUser, grantRolesByName } from '../../src/admin/operations.js';
import { cliActor } from '../../src/admin/operations/common.js';

/**
 * The callers the client registration tests need besides initial access tokens: carol, a user of the
 * realm holding realm-management manage-clients, and alice, a user without it; each signs in with the
 * password grant through a public client `tool`, and the access tokens are returned.
 */
export async function registrationCallers(ts: TestServer): Promise<{ adminToken: string; adminId: string; userToken: string }> {
  const { id } = await createUser(ts.store, { realmId: REALM, username: 'carol', password: PASSWORD, email: 'carol@example.com', orgAliases: ['acme'] });
  await grantRolesByName(ts.store, { realmId: REALM, userId: id, clientId: 'realm-management', names: ['manage-clients'] }, cliActor());
  await createClient(ts.store, { realmId: REALM, clientId: 'tool', redirectUris: [], public: true, standardFlowEnabled: false, directAccessGrantsEnabled: true });
  const login = async (username: string): Promise<string> => {
    const res = await tokenRequest(ts, { grant_type: 'password', client_id: 'tool', username, password: PASSWORD, scope: 'openid' });
    assert.equal(res.statusCode, 200, res.body);
    return res.json().access_token as string;
  };
  return { adminToken: await login('carol'), adminId: id, userToken: await login('alice') };
}
