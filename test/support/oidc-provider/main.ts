// A real OpenID provider for the tests (the certified `oidc-provider` package), run as a process
// of its own: its own signing key, the users and clients it is given (OIDC_PROVIDER_CONFIG, JSON),
// and the package's development sign-in pages (a login form, then a consent form; any password).
// Prints `listening <issuer>` once it serves; stops on SIGTERM.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair } from 'jose';
import Provider from 'oidc-provider';

interface ProviderConfig {
  readonly clients: readonly { client_id: string; client_secret?: string; redirect_uris: string[] }[];
  /** Users by login: their claims. */
  readonly users: Readonly<Record<string, { name: string; email: string; groups: string[] }>>;
}

const config = JSON.parse(process.env.OIDC_PROVIDER_CONFIG ?? '{}') as ProviderConfig;
const server = createServer();
await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

const { privateKey } = await generateKeyPair('RS256', { extractable: true });
const provider = new Provider(issuer, {
  clients: config.clients.map((client) => ({
    ...client,
    token_endpoint_auth_method: client.client_secret === undefined ? 'none' : 'client_secret_post',
    grant_types: ['authorization_code'],
    response_types: ['code'],
  })),
  jwks: { keys: [{ ...(await exportJWK(privateKey)), kid: 'provider-key', alg: 'RS256', use: 'sig' }] },
  cookies: { keys: ['tollgate-tests-cookie-key'] },
  scopes: ['openid', 'profile', 'email', 'groups'],
  claims: { openid: ['sub'], profile: ['name'], email: ['email'], groups: ['groups'] },
  pkce: { required: () => true },
  async findAccount(_ctx, id) {
    const user = config.users[id];
    if (!user) return undefined;
    return { accountId: id, claims: async () => ({ sub: id, ...user }) };
  },
});
server.on('request', provider.callback());
process.stdout.write(`listening ${issuer}\n`);
process.on('SIGTERM', () => {
  server.closeAllConnections();
  server.close(() => process.exit(0));
});
