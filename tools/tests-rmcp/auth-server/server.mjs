// A real OAuth 2.1 authorization server for the rmcp interoperability tests (tests/oauth.rs), built on
// the npm package oidc-provider (pinned in package.json): the client credentials grant, token
// introspection (RFC 7662) and resource indicators (RFC 8707), with three static clients.
//
//   PORT=0 node server.mjs      # Node 22 or newer; prints `listening http://127.0.0.1:<port>` when ready
//
// Environment:
//   PORT      the port on 127.0.0.1 (default 0: a free one, printed on stdout)
//   RESOURCE  the resource a token is for when the client names none (default: none, no audience)
//
// Clients:
//   notes-client   / notes-secret     client_credentials, scope `notes`, tokens live 300 s
//   short-client   / short-secret     the same, tokens live 2 s (to see them expire)
//   notes-resource / resource-secret  the resource server's own client, to call introspection
//
// Any absolute http(s) resource a client asks for is accepted; the token's `aud` is that resource and
// its scope is what the client asked for within `notes`. Tokens are opaque, so the resource server can
// only learn about them by introspection. Stdout carries exactly one line; every notice goes to stderr.

import { generateKeyPairSync } from 'node:crypto';
import { createServer } from 'node:http';

// oidc-provider prints its notices with console.info (stdout); stdout is reserved for the ready line.
console.info = (...args) => console.error(...args);

const { default: Provider, errors } = await import('oidc-provider');

const port = Number.parseInt(process.env.PORT ?? '0', 10);
if (!Number.isInteger(port) || port < 0 || port > 65535) {
  console.error(`server.mjs: PORT must be a port number, got ${JSON.stringify(process.env.PORT)}`);
  process.exit(2);
}
const defaultResourceIndicator = process.env.RESOURCE || undefined;

const SCOPE = 'notes';
const TTL_SECONDS = { 'short-client': 2 };
const DEFAULT_TTL_SECONDS = 300;

function isHttpUrl(value) {
  const url = URL.parse(value);
  return url !== null && (url.protocol === 'http:' || url.protocol === 'https:');
}

function ttlFor(client) {
  return TTL_SECONDS[client?.clientId] ?? DEFAULT_TTL_SECONDS;
}

// The storage of a process that lives as long as one test: a Map per model, honouring expiry.
// (oidc-provider's own in-memory adapter does the same, with a warning meant for production setups.)
const stores = new Map();
class MapAdapter {
  constructor(model) {
    if (!stores.has(model)) stores.set(model, new Map());
    this.store = stores.get(model);
  }

  async upsert(id, payload, expiresIn) {
    const expiresAt = typeof expiresIn === 'number' ? Date.now() + expiresIn * 1000 : Infinity;
    this.store.set(id, { payload, expiresAt });
  }

  async find(id) {
    const entry = this.store.get(id);
    if (!entry) return undefined;
    if (entry.expiresAt <= Date.now()) {
      this.store.delete(id);
      return undefined;
    }
    return entry.payload;
  }

  async findByUid(uid) {
    for (const [id, { payload }] of this.store) if (payload.uid === uid) return this.find(id);
    return undefined;
  }

  async findByUserCode(userCode) {
    for (const [id, { payload }] of this.store) if (payload.userCode === userCode) return this.find(id);
    return undefined;
  }

  async consume(id) {
    const payload = await this.find(id);
    if (payload) payload.consumed = Math.floor(Date.now() / 1000);
  }

  async destroy(id) {
    this.store.delete(id);
  }

  async revokeByGrantId(grantId) {
    for (const [id, { payload }] of this.store) if (payload.grantId === grantId) this.store.delete(id);
  }
}

// A fresh signing key per run (nothing here signs a token the tests read; the provider needs one).
const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
const signingKey = { ...privateKey.export({ format: 'jwk' }), alg: 'ES256', use: 'sig', kid: 'run' };

const confidential = (clientId, secret) => ({
  client_id: clientId,
  client_secret: secret,
  grant_types: ['client_credentials'],
  response_types: [],
  redirect_uris: [],
  token_endpoint_auth_method: 'client_secret_post',
  scope: SCOPE,
});

function configuration() {
  return {
    adapter: MapAdapter,
    jwks: { keys: [signingKey] },
    clients: [
      confidential('notes-client', 'notes-secret'),
      confidential('short-client', 'short-secret'),
      {
        ...confidential('notes-resource', 'resource-secret'),
        grant_types: [],
        scope: undefined,
        token_endpoint_auth_method: 'client_secret_basic',
      },
    ],
    scopes: ['openid', SCOPE],
    // The signing key is an EC key, so clients default to it too.
    clientDefaults: { id_token_signed_response_alg: 'ES256' },
    clientBasedCORS: () => false,
    features: {
      devInteractions: { enabled: false },
      clientCredentials: { enabled: true },
      introspection: {
        enabled: true,
        // Only the resource server learns what a token is.
        allowedPolicy: async (_ctx, client) => client.clientId === 'notes-resource',
      },
      revocation: { enabled: false },
      resourceIndicators: {
        enabled: true,
        defaultResource: async (_ctx, _client, oneOf) => oneOf ?? defaultResourceIndicator,
        useGrantedResource: async () => true,
        getResourceServerInfo: async (_ctx, resourceIndicator, client) => {
          if (!isHttpUrl(resourceIndicator)) {
            throw new errors.InvalidTarget('the resource must be an absolute http(s) URL');
          }
          return {
            audience: resourceIndicator,
            scope: SCOPE,
            accessTokenFormat: 'opaque',
            accessTokenTTL: ttlFor(client),
          };
        },
      },
    },
    ttl: {
      AccessToken: (_ctx, token, client) => token.resourceServer?.accessTokenTTL ?? ttlFor(client),
      ClientCredentials: (_ctx, token, client) => token.resourceServer?.accessTokenTTL ?? ttlFor(client),
      Grant: DEFAULT_TTL_SECONDS,
      Interaction: 60,
      Session: DEFAULT_TTL_SECONDS,
    },
  };
}

// The issuer must be known before the provider is made, so the port is bound first.
const server = createServer();
await new Promise((resolve, reject) => {
  server.once('error', reject);
  server.listen(port, '127.0.0.1', resolve);
});
const issuer = `http://127.0.0.1:${server.address().port}`;
const provider = new Provider(issuer, configuration());
provider.on('server_error', (_ctx, error) => console.error('server.mjs: server_error', error));
server.on('request', provider.callback());

function stop(signal) {
  server.close(() => process.exit(0));
  server.closeAllConnections();
  // Never linger: the test kills this process when it is done with it.
  setTimeout(() => process.exit(0), 1000).unref();
  console.error(`server.mjs: ${signal}, stopping`);
}
process.once('SIGTERM', () => stop('SIGTERM'));
process.once('SIGINT', () => stop('SIGINT'));

process.stdout.write(`listening ${issuer}\n`);
