import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createLogger, isSecretKey, redactText } from '../../src/log/logger.js';

function capture() {
  const lines: string[] = [];
  const destination = new Writable({
    write(chunk, _enc, done) {
      lines.push(...chunk.toString().split('\n').filter(Boolean));
      done();
    },
  });
  return { lines, logger: createLogger({ destination, level: 'debug' }) };
}

describe('logger', () => {
  it('writes one JSON line per event with secrets removed wherever they sit', () => {
    const { lines, logger } = capture();
    logger.info(
      {
        request: {
          headers: { authorization: 'Bearer abc.def.ghi' },
          body: { client_secret: 's3cr3t-value' },
        },
        job: { data: { userData: 'I2Nsb3VkLWNvbmZpZw==', kubeconfig: 'apiVersion: v1' } },
        apiKey: 'pk-123456',
        instance: 'gpu-1',
      },
      'created instance',
    );
    expect(lines).toHaveLength(1);
    const line = lines[0]!;
    const parsed = JSON.parse(line);
    expect(parsed.msg).toBe('created instance');
    expect(parsed.level).toBe('info');
    expect(parsed.instance).toBe('gpu-1');
    for (const secret of [
      'abc.def.ghi',
      's3cr3t-value',
      'I2Nsb3VkLWNvbmZpZw==',
      'apiVersion: v1',
      'pk-123456',
    ]) {
      expect(line).not.toContain(secret);
    }
  });

  it('masks tokens pasted into free text and error messages', () => {
    const { lines, logger } = capture();
    const token = ['xoxb', '1234567890', 'abcdefghij'].join('-');
    logger.warn(`user pasted ${token} into a command`);
    logger.error(
      { err: new Error('401 for Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ4In0.sig') },
      'failed',
    );
    const text = lines.join('\n');
    expect(text).not.toContain(token);
    expect(text).not.toContain('eyJhbGciOiJIUzI1NiJ9');
    expect(redactText('Bearer abc')).toBe('Bearer [redacted]');
  });

  it('hides secrets at any depth and under any key whose name says secret', () => {
    const { lines, logger } = capture();
    const secrets = {
      bot_access_token: 'tok-bot-access',
      refreshToken: 'tok-refresh',
      'x-api-key': 'tok-header-key',
      SLACK_SIGNING_SECRET: 'tok-signing',
      dbPassword: 'tok-password',
      Cookie: 'tok-cookie',
      kubeconfig_yaml: 'tok-kubeconfig',
      privateKeyPem: 'tok-private',
      sealKey: 'tok-seal',
      response_url: 'https://hooks.slack.com/actions/T1/1/tok-response',
    };
    // Five levels down, inside an array too: the old path rules stopped at three.
    logger.info({ a: { b: { c: { d: [{ e: secrets }] } } }, instance: 'gpu-1', count: 3 }, 'deep');
    const line = lines[0]!;
    for (const value of Object.values(secrets)) expect(line).not.toContain(value);
    const parsed = JSON.parse(line);
    expect(parsed.a.b.c.d[0].e.bot_access_token).toBe('[redacted]');
    expect(parsed.instance).toBe('gpu-1');
    expect(parsed.count).toBe(3);
  });

  it("hides secrets in a child logger's bindings", () => {
    const { lines, logger } = capture();
    logger
      .child({ component: 'bolt', auth: { bot_token: 'tok-child' } })
      .child({ clientSecret: 'tok-grandchild' })
      .warn('x');
    expect(lines[0]).not.toContain('tok-child');
    expect(lines[0]).not.toContain('tok-grandchild');
    expect(JSON.parse(lines[0]!).component).toBe('bolt');
  });

  it('bounds the work on deep, wide and circular objects and still writes the line', () => {
    const { lines, logger } = capture();
    let deep: Record<string, unknown> = { token: 'tok-at-the-bottom' };
    for (let i = 0; i < 50; i++) deep = { next: deep };
    const circular: Record<string, unknown> = { name: 'loop' };
    circular.self = circular;
    const wide = Object.fromEntries(Array.from({ length: 1000 }, (_, i) => [`k${i}`, i]));
    logger.info({ deep, circular, wide, list: Array.from({ length: 1000 }, (_, i) => i) }, 'big');
    const parsed = JSON.parse(lines[0]!);
    expect(lines[0]).not.toContain('tok-at-the-bottom');
    expect(parsed.circular.self).toBe('[circular]');
    expect(Object.keys(parsed.wide)).toHaveLength(201);
    expect(parsed.list).toHaveLength(201);
  });

  it.each([
    ['token', true],
    ['bot_access_token', true],
    ['accessToken', true],
    ['APIKey', true],
    ['x-api-key', true],
    ['Authorization', true],
    ['userData', true],
    ['instance', false],
    ['monkey', false],
    ['tokenizer', false],
    ['projectId', false],
  ])('names %s a secret: %s', (key, secret) => {
    expect(isSecretKey(key)).toBe(secret);
  });
});
