import { afterEach, describe, expect, it } from 'vitest';
import { signJwt } from '../../src/sim/jwt.js';
import { startTestSim, type TestSim, tokenFor } from './sim-harness.js';

let t: TestSim;
afterEach(async () => {
  await t?.close();
});

describe('infrastructure API authentication', () => {
  it('answers 401 with a message for a missing, malformed or wrong token', async () => {
    t = await startTestSim('B');
    const none = await t.cloud('GET', '/instances', { token: null });
    expect(none.status).toBe(401);
    expect(none.json.message).toMatch(/no Authorization header/);
    expect(none.headers['www-authenticate']).toBe('Bearer');
    const basic = await t.cloud('GET', '/instances', {
      headers: { authorization: 'Basic dXNlcjpwdw==' },
      token: null,
    });
    expect(basic.status).toBe(401);
    const wrong = await t.cloud('GET', '/instances', { token: 'sim-cloud-not-the-token' });
    expect(wrong.status).toBe(401);
    expect(wrong.text).not.toContain(t.sim.info.cloudToken);
  });

  it('accepts a JWT from the token server for the cloud audience until it expires on the sim clock', async () => {
    t = await startTestSim('B');
    const token = await tokenFor(t, t.sim.info.cloudAudience);
    expect((await t.cloud('GET', '/instances', { token })).status).toBe(200);
    await t.sim.clock.advance(86_399_000);
    expect((await t.cloud('GET', '/instances', { token })).status).toBe(200);
    await t.sim.clock.advance(1_000);
    const expired = await t.cloud('GET', '/instances', { token });
    expect(expired.status).toBe(401);
    expect(expired.json.message).toMatch(/expired/);
  });

  it('refuses a metrics-audience JWT and one signed by someone else', async () => {
    t = await startTestSim('B');
    const metricsToken = await tokenFor(t, t.sim.info.metricsAudience);
    const r = await t.cloud('GET', '/instances', { token: metricsToken });
    expect(r.status).toBe(401);
    expect(r.json.message).toMatch(/another audience/);
    const forged = signJwt(
      { aud: t.sim.info.cloudAudience, exp: Math.floor(Date.now() / 1000) + 3600 },
      'guess',
    );
    expect((await t.cloud('GET', '/instances', { token: forged })).status).toBe(401);
  });
});

describe('token server', () => {
  it('issues Bearer JWTs valid 86400 s, and refuses bad credentials, grant types and audiences', async () => {
    t = await startTestSim('A');
    const url = `${t.sim.info.authUrl}/oauth/token`;
    const good = {
      client_id: t.sim.info.clientId,
      client_secret: t.sim.info.clientSecret,
      audience: t.sim.info.cloudAudience,
      grant_type: 'client_credentials',
    };
    const ok = await t.http('POST', url, { body: good });
    expect(ok.status).toBe(200);
    expect(ok.json).toMatchObject({ expires_in: 86_400, token_type: 'Bearer' });
    const claims = JSON.parse(Buffer.from(ok.json.access_token.split('.')[1], 'base64url').toString());
    expect(claims).toMatchObject({ aud: t.sim.info.cloudAudience, sub: t.sim.info.clientId });
    expect(claims.exp - claims.iat).toBe(86_400);

    const badSecret = await t.http('POST', url, { body: { ...good, client_secret: 'nope' } });
    expect(badSecret.status).toBe(401);
    expect(badSecret.json.error).toBe('invalid_client');
    expect((await t.http('POST', url, { body: { ...good, grant_type: 'password' } })).status).toBe(400);
    const badAudience = await t.http('POST', url, { body: { ...good, audience: 'https://elsewhere' } });
    expect(badAudience.status).toBe(400);
    expect(badAudience.json.error_description).toMatch(/Unknown audience/);
    const form = await t.http('POST', url, {
      raw: new URLSearchParams(good).toString(),
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    expect(form.status).toBe(200);
  });
});

describe('projects and membership', () => {
  it('needs a valid X-PROJECT-ID, 404s an unknown project and 403s a project of someone else (A, B)', async () => {
    t = await startTestSim('A');
    const missing = await t.cloud('GET', '/instances', { project: null });
    expect(missing.status).toBe(404);
    expect(missing.json.message).toMatch(/X-PROJECT-ID header is required/);
    const create = await t.cloud('POST', '/instances', {
      body: { name: 'x', type: 'cpu.16x' },
      project: 'not-a-uuid',
    });
    expect(create.status).toBe(400);
    expect(create.json.message).toMatch(/X-PROJECT-ID must be a UUID/);
    const unknown = await t.cloud('GET', '/instances', { project: '00000000-0000-4000-8000-000000000000' });
    expect(unknown.status).toBe(404);
    const state = (await t.control('GET', '/state')).json;
    const other = state.projects.find((p: { name: string }) => p.name === 'other');
    expect(other.member).toBe(false);
    const forbidden = await t.cloud('GET', '/instances', { project: other.id });
    expect(forbidden.status).toBe(403);
    expect(forbidden.json.message).toMatch(/not a member/);
  });

  it('in shape C accepts any X-ORG-ID and lists, reads and deletes projects', async () => {
    t = await startTestSim('C');
    const r = await t.cloud('GET', '/instances', { headers: { 'x-org-id': 'org-123' } });
    expect(r.status).toBe(200);
    const projects = await t.cloud('GET', '/projects', { project: null });
    expect(projects.json).toEqual([{ id: t.sim.info.projectId, name: 'default', state: 'active', tags: {} }]);
    expect(
      (await t.cloud('GET', '/projects/00000000-0000-4000-8000-000000000000', { project: null })).status,
    ).toBe(404);
  });
});
