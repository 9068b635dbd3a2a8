import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createLogger, redactText } from '../../src/log/logger.js';

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
});
