import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  CloudAuthError,
  clientCredentials,
  createInfraClient,
  type InfraClient,
  staticToken,
  type TokenProvider,
} from '../../src/cloud/index.js';
import { ErrorCode } from '../../src/errors.js';
import { type ScriptedServer, startScriptedServer } from '../fakes/scripted-http-server.js';
import { instanceBody, PROJECT } from './instance-fixtures.js';

const INSTANCE = instanceBody();

let auth: ScriptedServer;
let api: ScriptedServer;
let client: InfraClient | undefined;

beforeEach(async () => {
  auth = await startScriptedServer();
  api = await startScriptedServer();
});
afterEach(async () => {
  await client?.close();
  client = undefined;
  api.assertNoUnexpected();
  auth.assertNoUnexpected();
  await Promise.all([auth.close(), api.close()]);
});

/** Token server that issues tok-1, tok-2… with the given lifetime, after an optional gate opens. */
function issueTokens(expiresIn = 86_400, gate?: Promise<void>) {
  auth.on('POST', '/oauth/token', async (req, n) => {
    await gate;
    const body = req.json as Record<string, unknown>;
    if (
      body.client_id !== 'cid' ||
      body.client_secret !== 'secret' ||
      body.grant_type !== 'client_credentials'
    ) {
      return { status: 401, json: { error: 'invalid_client' } };
    }
    return { json: { access_token: `tok-${n}`, expires_in: expiresIn, token_type: 'Bearer' } };
  });
}

/** API that accepts only the bearers in `valid` (checked at request time). */
function acceptTokens(valid: () => readonly string[]) {
  api.on('GET', '/instances', (req) => {
    const token = String(req.headers.authorization ?? '').replace(/^Bearer /, '');
    return valid().includes(token)
      ? { json: [INSTANCE] }
      : { status: 401, json: { message: 'token expired' } };
  });
}

function clientWith(tokens: TokenProvider) {
  return createInfraClient({ baseUrl: api.url, shape: 'B', projectId: PROJECT, tokens });
}

function oauthClient({ now, clientSecret = 'secret' }: { now?: () => number; clientSecret?: string } = {}) {
  return clientWith(
    clientCredentials({
      authUrl: auth.url,
      clientId: 'cid',
      clientSecret,
      audience: api.url,
      ...(now ? { now } : {}),
    }),
  );
}

describe('OAuth client credentials', () => {
  it('sends the audience and caches the token across calls', async () => {
    issueTokens();
    acceptTokens(() => ['tok-1']);
    client = oauthClient();
    await client.listInstances();
    await client.listInstances();
    expect(auth.requests).toHaveLength(1);
    expect(auth.requests[0]!.json).toMatchObject({ audience: api.url, grant_type: 'client_credentials' });
    expect(api.requests.map((r) => r.headers.authorization)).toEqual(['Bearer tok-1', 'Bearer tok-1']);
  });

  it('makes 20 concurrent calls share a single token request', async () => {
    let open!: () => void;
    const gate = new Promise<void>((resolve) => {
      open = resolve;
    });
    issueTokens(86_400, gate);
    acceptTokens(() => ['tok-1']);
    client = oauthClient();
    const calls = Array.from({ length: 20 }, () => client!.listInstances());
    await auth.nextRequest();
    open();
    const results = await Promise.all(calls);
    expect(results.every((r) => r[0]?.name === 'train-1')).toBe(true);
    expect(auth.requests).toHaveLength(1);
    expect(api.requests).toHaveLength(20);
  });

  it('fetches a new token once the old one is about to expire', async () => {
    let t = 1_000_000;
    issueTokens(3600);
    acceptTokens(() => ['tok-1', 'tok-2']);
    client = oauthClient({ now: () => t });
    await client.listInstances();
    t += 30 * 60_000; // half an hour: still well inside the hour
    await client.listInstances();
    expect(auth.requests).toHaveLength(1);
    t += 30 * 60_000; // the hour is up
    await client.listInstances();
    expect(auth.requests).toHaveLength(2);
    expect(api.requests.at(-1)!.headers.authorization).toBe('Bearer tok-2');
  });

  it('after a 401 refreshes the token and retries the request once', async () => {
    issueTokens();
    // The API already rotated: only the second token is good.
    acceptTokens(() => ['tok-2']);
    client = oauthClient();
    const list = await client.listInstances();
    expect(list).toHaveLength(1);
    expect(auth.requests).toHaveLength(2);
    expect(api.requests.map((r) => r.headers.authorization)).toEqual(['Bearer tok-1', 'Bearer tok-2']);
  });

  it('a second 401 surfaces as an auth error naming the operation', async () => {
    issueTokens();
    acceptTokens(() => []);
    client = oauthClient();
    const err = await client.listInstances().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(CloudAuthError);
    expect(err).toMatchObject({ status: 401, code: ErrorCode.Auth, operation: 'listInstances' });
    expect((err as Error).message).toMatch(
      /listInstances failed with HTTP 401: token expired — the credentials were refused/,
    );
    expect(api.requests).toHaveLength(2);
    expect(auth.requests).toHaveLength(2);
  });

  it('a create refused with 401 is sent again once (it was never processed)', async () => {
    issueTokens();
    api.on('POST', '/instances', (req) =>
      req.headers.authorization === 'Bearer tok-2'
        ? { status: 201, json: INSTANCE }
        : { status: 401, json: { message: 'expired' } },
    );
    client = oauthClient();
    const created = await client.createInstance({ name: 'train-1', type: 'h100-hgx-80gb.8x' });
    expect(created.id).toBe(INSTANCE.id);
    expect(api.count('POST', '/instances')).toBe(2);
  });

  it('wrong client credentials give an auth error that names what to check and no secret', async () => {
    issueTokens();
    client = oauthClient({ clientSecret: 'wrong' });
    const err = await client.listInstances().catch((e: unknown) => e);
    expect(err).toMatchObject({ code: ErrorCode.Auth });
    expect((err as Error).message).toMatch(/client id, secret and audience/);
    expect((err as Error).message).not.toContain('wrong');
    expect(api.requests).toHaveLength(0);
  });
});

describe('static bearer token', () => {
  it('is sent as Authorization: Bearer on every call', async () => {
    acceptTokens(() => ['static-abc']);
    client = clientWith(staticToken('static-abc'));
    await client.listInstances();
    expect(api.requests[0]!.headers.authorization).toBe('Bearer static-abc');
  });

  it('a refused static token is an auth error at once (the same token is not sent twice)', async () => {
    acceptTokens(() => ['right']);
    client = clientWith(staticToken('wrong'));
    await expect(client.listInstances()).rejects.toBeInstanceOf(CloudAuthError);
    expect(api.requests).toHaveLength(1);
  });
});
