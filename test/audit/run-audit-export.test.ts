import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { runAuditExport } from '../../src/audit/run-audit-export.js';
import { createLogger } from '../../src/log/logger.js';
import { createAudit } from '../../src/store/audit.js';
import { redisDb, spawnGpuops } from '../support/gpuops-process.js';

// `gpuops audit export`: the audit trail as JSON lines, oldest first, within the policy's retention.
// A database of its own, because the command reads the production key `gpuops:audit`.

const DB = 9;
const HOUR = 3_600_000;

class Collect extends Writable {
  text = '';
  override _write(chunk: Buffer, _encoding: string, done: () => void): void {
    this.text += chunk.toString('utf8');
    done();
  }
}

describe('gpuops audit export', () => {
  let redis: Redis;
  let redisUrl: string;
  let dir: string;
  let policyFile: string;

  beforeAll(async () => {
    redisUrl = redisDb(inject('redisUrl'), DB);
    redis = new Redis(redisUrl, { maxRetriesPerRequest: 1 });
    await redis.del('gpuops:audit');
    dir = await mkdtemp(join(tmpdir(), 'gpuops-audit-'));
    policyFile = join(dir, 'policy.yaml');
    await writeFile(policyFile, 'audit:\n  retention: 1h\n');
    const log = createLogger({ level: 'silent' });
    // One entry from three hours ago, beyond the 1h retention of the policy file.
    const old = createAudit(redis, {
      retentionSeconds: 30 * 86_400,
      log,
      clock: () => Date.now() - 3 * HOUR,
    });
    await old.append({ event: 'request', actor: 'U0OLD', operation: 'ls', outcome: 'answered' });
    const audit = createAudit(redis, { retentionSeconds: 30 * 86_400, log });
    await audit.append({
      event: 'request',
      actor: 'U0ADA',
      operation: 'create',
      target: 'big-1',
      outcome: 'needs-approval',
      parameters: { type: 'h100-hgx-80gb.8x', token: 'xoxb-should-never-be-here' },
    });
    await audit.append({
      event: 'decision',
      actor: 'U0ADA',
      approver: 'U0BOB',
      operation: 'create',
      target: 'big-1',
      outcome: 'approved',
    });
    await audit.append({
      event: 'outcome',
      actor: 'U0ADA',
      operation: 'create',
      target: 'big-1',
      outcome: 'done',
      durationMs: 1234,
    });
  });
  afterAll(async () => {
    await redis.del('gpuops:audit');
    redis.disconnect();
    await rm(dir, { recursive: true, force: true });
  });

  it('writes every entry as one JSON line, oldest first, to the --out file', async () => {
    const out = join(dir, 'nested', 'audit.jsonl');
    const stderr = new Collect();
    const code = await runAuditExport(
      ['export', '--out', out],
      { REDIS_URL: redisUrl },
      { stdout: new Collect(), stderr: { write: (t: string) => stderr.write(t) } },
    );
    expect(code).toBe(0);
    const lines = (await readFile(out, 'utf8'))
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(lines.map((l) => `${l.event}:${l.actor}:${l.outcome}`)).toEqual([
      'request:U0OLD:answered',
      'request:U0ADA:needs-approval',
      'decision:U0ADA:approved',
      'outcome:U0ADA:done',
    ]);
    expect(lines[1]).toMatchObject({
      operation: 'create',
      target: 'big-1',
      parameters: { type: 'h100-hgx-80gb.8x' },
    });
    expect(JSON.stringify(lines)).not.toContain('xoxb-should-never-be-here');
    expect(lines[3].durationMs).toBe(1234);
    expect(stderr.text).toBe(`Wrote 4 audit entries to ${out}.\n`);
  });

  it("keeps to the policy's retention (GPUOPS_POLICY) and writes to standard output without --out", async () => {
    const stdout = new Collect();
    const code = await runAuditExport(
      ['export'],
      { REDIS_URL: redisUrl, GPUOPS_POLICY: policyFile },
      { stdout, stderr: { write: () => true } },
    );
    expect(code).toBe(0);
    const actors = stdout.text
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l).actor);
    expect(actors).toEqual(['U0ADA', 'U0ADA', 'U0ADA']);
  });

  it('says what is wrong: an unknown action, an unreachable Redis, a bad policy file', async () => {
    const errors: string[] = [];
    const io = { stdout: new Collect(), stderr: { write: (t: string) => errors.push(t) } };
    expect(await runAuditExport(['import'], { REDIS_URL: redisUrl }, io)).toBe(2);
    expect(errors.join('')).toContain('unknown action "import"; the one action is export.');
    expect(await runAuditExport(['export'], { REDIS_URL: 'redis://127.0.0.1:1' }, io)).toBe(1);
    expect(errors.join('')).toContain('Could not reach Redis at redis://127.0.0.1:1');
    expect(
      await runAuditExport(['export'], { REDIS_URL: redisUrl, GPUOPS_POLICY: join(dir, 'missing.yaml') }, io),
    ).toBe(1);
    expect(errors.join('')).toMatch(
      /The policy file .*missing\.yaml is invalid at line 1, column 1: cannot read it \(there is no such file\)/,
    );
  });

  it('runs as `npx gpuops audit export`', async () => {
    const child = spawnGpuops(['audit', 'export'], { REDIS_URL: redisUrl, GPUOPS_POLICY: policyFile });
    const status = await child.exited;
    expect(status.code, child.stderr()).toBe(0);
    expect(child.lines.map((l) => JSON.parse(l).outcome)).toEqual(['needs-approval', 'approved', 'done']);
  }, 30_000);
});
