import type { Services } from '../services.js';
import { randomToken } from '../crypto/random.js';
import { realmBase } from '../services.js';
import { createClient, createOrganization, createRealm, createUser } from './operations.js';

export const DEMO_REALM = 'demo';
export const DEMO_CLIENT = 'demo-app';
export const DEMO_SCOPES = 'openid profile email core_data exports offline_access';

/**
 * `realmgate start --demo`: on an empty database, creates a realm, an organization, a user and a
 * confidential client, and prints what a newcomer needs to try the flow.
 */
export async function setupDemo(services: Services, print: (line: string) => void): Promise<void> {
  const { store, config } = services;
  const redirectUri = `${config.appUrl}/authentication_code`;
  const authUrl = `${realmBase(config, DEMO_REALM)}/protocol/openid-connect/auth?${new URLSearchParams({
    client_id: DEMO_CLIENT,
    redirect_uri: redirectUri,
    response_type: 'code',
    scope: DEMO_SCOPES,
    state: 'demo',
  }).toString().replace(/\+/g, '%20')}`;
  const tokenUrl = `${realmBase(config, DEMO_REALM)}/protocol/openid-connect/token`;

  if (await store.realms.get(DEMO_REALM)) {
    print(`Demo realm "${DEMO_REALM}" already exists; its credentials were printed when it was created.`);
    print(`(Reset the password with: npx realmgate user set-password ${DEMO_REALM} demo --password-stdin)`);
    // The server may now run on another port or address than when the demo was created: whitelist the
    // code page of this run too, so that the printed URL works.
    const client = await store.clients.get(DEMO_REALM, DEMO_CLIENT);
    if (client && !client.redirectUris.includes(redirectUri)) {
      await store.clients.update(DEMO_REALM, DEMO_CLIENT, { redirectUris: [...client.redirectUris, redirectUri] });
      print(`(Added ${redirectUri} to the redirect URIs of ${DEMO_CLIENT}.)`);
    }
  } else {
    await createRealm(store, { id: DEMO_REALM, displayName: 'Realmgate demo' });
    await createOrganization(store, { realmId: DEMO_REALM, alias: 'acme', name: 'Acme Inc.' });
    const password = randomToken(12);
    await createUser(store, { realmId: DEMO_REALM, username: 'demo', password, email: 'demo@example.com', orgAliases: ['acme'] });
    const { secret } = await createClient(store, { realmId: DEMO_REALM, clientId: DEMO_CLIENT, redirectUris: [redirectUri], name: 'Demo application' });
    print('Created the demo realm:');
    print(`  user:          demo / ${password}`);
    print(`  organization:  acme (Acme Inc.)`);
    print(`  client:        ${DEMO_CLIENT} / ${secret}`);
    print(`  redirect URI:  ${redirectUri}`);
    print('');
    print('Exchange the code you get (within 45 seconds) with:');
    print(`  curl -s -u '${DEMO_CLIENT}:${secret}' -d grant_type=authorization_code -d code=CODE --data-urlencode 'redirect_uri=${redirectUri}' ${tokenUrl}`);
  }
  print('');
  print('Open this URL in a browser to log in:');
  print(`  ${authUrl}`);
}
