import { randomUUID } from 'node:crypto';
import { Writable } from 'node:stream';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { parseCommand } from '../../src/commands/parse-command.js';
import { createLogger } from '../../src/log/logger.js';
import { auditFieldsOf, createAudit, isSecretKey } from '../../src/store/audit.js';

const prefix = `test-audit-${randomUUID().slice(0, 8)}`;
const DAY = 86_400_000;
let redis: Redis;

function capture() {
  const lines: string[] = [];
  const destination = new Writable({
    write(chunk, _enc, done) {
      lines.push(...chunk.toString().split('\n').filter(Boolean));
      done();
    },
  });
  return { lines, log: createLogger({ destination, level: 'info' }) };
}

function collect() {
  let text = '';
  const out = new Writable({
    highWaterMark: 64, // small, so the export has to wait for drain
    write(chunk, _enc, done) {
      text += chunk.toString();
      setImmediate(done);
    },
  });
  return { out, text: () => text };
}

beforeAll(() => {
  redis = new Redis(inject('redisUrl'), { maxRetriesPerRequest: 1 });
});

afterAll(async () => {
  const keys = await redis.keys(`${prefix}*`);
  if (keys.length > 0) await redis.del(...keys);
  redis.disconnect();
});

describe('the audit stream', () => {
  it('appends, shows the latest newest first, exports JSON lines, and logs each entry once', async () => {
    const { lines, log } = capture();
    const audit = createAudit(redis, { prefix: `${prefix}-a`, retentionSeconds: 30 * 86_400, log });
    const parsed = parseCommand('create big h100-hgx-80gb.8x --tag team=vision');
    if (!parsed.ok) throw new Error('bad test command');
    const create = auditFieldsOf(parsed.command);
    const request = await audit.append({
      event: 'request',
      actor: 'U0ADA00001',
      ...create,
      project: 'research',
      outcome: 'needs-approval',
      approvalId: 'apr-abc',
    });
    await audit.append({
      event: 'decision',
      actor: 'U0ADA00001',
      approver: 'U0LEAD0001',
      ...create,
      project: 'research',
      outcome: 'approved',
      approvalId: 'apr-abc',
    });
    await audit.append({
      event: 'outcome',
      actor: 'U0ADA00001',
      approver: 'U0LEAD0001',
      ...create,
      project: 'research',
      outcome: 'done',
      durationMs: 4210,
      jobId: 'apr-abc',
    });
    expect(request).toMatchObject({
      event: 'request',
      operation: 'create',
      target: 'big',
      parameters: { modal: false, name: 'big', type: 'h100-hgx-80gb.8x', tags: { team: 'vision' } },
    });
    expect(request.id).toMatch(/^\d+-\d+$/);

    const latest = await audit.latest(2);
    expect(latest.map((e) => e.outcome)).toEqual(['done', 'approved']);
    expect(latest[0]).toMatchObject({ approver: 'U0LEAD0001', durationMs: 4210, jobId: 'apr-abc' });

    const { out, text } = collect();
    expect(await audit.exportJsonLines(out)).toBe(3);
    const exported = text()
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(exported.map((e) => e.outcome)).toEqual(['needs-approval', 'approved', 'done']);
    expect(exported[0]).toEqual(request);

    const logged = lines.map((l) => JSON.parse(l)).filter((l) => l.msg === 'audit');
    expect(logged).toHaveLength(3);
    expect(logged[2].audit).toMatchObject({ event: 'outcome', outcome: 'done', operation: 'create' });
  });

  it('trims entries older than the retention and never shows them', async () => {
    const { log } = capture();
    let now = Date.now() - 40 * DAY;
    const audit = createAudit(redis, {
      prefix: `${prefix}-r`,
      retentionSeconds: 30 * 86_400,
      log,
      clock: () => now,
    });
    for (let i = 0; i < 350; i += 1) {
      await audit.append({ event: 'start', actor: 'gpuops', operation: 'ls', outcome: `old ${i}` });
      now += 1;
    }
    expect(await redis.xlen(audit.key)).toBe(350);
    now = Date.now();
    await audit.append({ event: 'start', actor: 'gpuops', operation: 'ls', outcome: 'new' });
    // Approximate trimming drops whole stream nodes (100 entries each by default): most of the old ones.
    expect(await redis.xlen(audit.key)).toBeLessThanOrEqual(101);
    expect((await audit.latest(500)).map((e) => e.outcome)).toEqual(['new']);
    const { out, text } = collect();
    expect(await audit.exportJsonLines(out)).toBe(1);
    expect(text()).toContain('"outcome":"new"');
  });

  it('never stores or logs a secret-looking parameter, wherever it sits', async () => {
    const { lines, log } = capture();
    const audit = createAudit(redis, { prefix: `${prefix}-s`, retentionSeconds: 86_400, log });
    const secrets = {
      token: 'xoxb-1111-2222-abcdefSECRET1',
      userData: 'I2Nsb3VkLWNvbmZpZwpTRUNSRVQy',
      kubeconfig: 'apiVersion: v1\nclusters: [] # SECRET3',
      client_secret: 'SECRET4-client',
      'Api-Key': 'SECRET5-api',
      responseUrl: 'https://hooks.slack.com/commands/T0/1/SECRET6',
    };
    const publicKey =
      'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIFuyvIwN8SVrspCLSMqeCCUbe1WBH+UgcwkB1g3duGfL ada@laptop';
    const entry = await audit.append({
      event: 'request',
      actor: 'U0ADA00001',
      operation: 'k8s.register',
      target: 'prod',
      parameters: {
        ...secrets,
        name: 'prod',
        publicKey,
        nested: { deeper: [{ password: 'SECRET7-pw', note: 'Authorization: Bearer SECRET8.jwt-ish' }] },
        pasted: 'my key is -----BEGIN OPENSSH PRIVATE KEY-----\nSECRET9\n-----END OPENSSH PRIVATE KEY-----',
        jwt: 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJTRUNSRVQxMCJ9.c2lnbmF0dXJl',
      },
    });
    const raw = JSON.stringify(await redis.xrange(audit.key, '-', '+'));
    const everything = `${raw}\n${lines.join('\n')}\n${JSON.stringify(entry)}`;
    for (const secret of [
      ...Object.values(secrets),
      'SECRET1',
      'SECRET2',
      'SECRET3',
      'SECRET7',
      'SECRET8',
      'SECRET9',
      'eyJzdWIiOiJTRUNSRVQxMCJ9',
    ]) {
      expect(everything, secret).not.toContain(secret);
    }
    // Public keys are not secrets and stay, so the trail shows which key was added.
    expect(entry.parameters.publicKey).toBe(publicKey);
    expect(raw).toContain('AAAAC3NzaC1lZDI1NTE5AAAAIFuyvIwN8SVrspCLSMqeCCUbe1WBH');
    expect(entry.parameters.name).toBe('prod');
    expect(lines.filter((l) => JSON.parse(l).msg === 'audit')).toHaveLength(1);
  });

  it('knows secret keys by name whatever their spelling', () => {
    for (const key of [
      'token',
      'accessToken',
      'user_data',
      'USER-DATA',
      'kubeconfig',
      'privateKey',
      'client_secret',
    ]) {
      expect(isSecretKey(key), key).toBe(true);
    }
    for (const key of ['publicKey', 'public_key', 'name', 'sshKeys', 'cluster']) {
      expect(isSecretKey(key), key).toBe(false);
    }
  });
});
