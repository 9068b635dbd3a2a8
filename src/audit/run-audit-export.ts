import { createWriteStream } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import type { Writable } from 'node:stream';
import { finished } from 'node:stream/promises';
import type { Redis } from 'ioredis';
import { connectOnce } from '../app/redis-connections.js';
import { AUDIT_EXPORT_COMMAND } from '../cli-options/commands.js';
import { optionValue, parseCli, readCommandArgs } from '../cli-options/options.js';
import { toolFailed } from '../cli-options/tool-failure.js';
import { parseConfig } from '../config.js';
import { createLogger } from '../log/logger.js';
import { loadPolicy } from '../policy/load-policy.js';
import { createAudit } from '../store/audit.js';
import { CLUSTER_STORE_PREFIX } from '../store/store.js';

// `gpuops audit export [--out <file.jsonl>]`: the audit trail (src/store/audit.ts) as JSON lines,
// oldest first, for a SIEM or a spreadsheet. Reads REDIS_URL, and GPUOPS_POLICY for the retention.

export interface AuditExportIo {
  readonly stdout: Writable;
  readonly stderr: { write(text: string): unknown };
}

/** Reads the arguments against AUDIT_EXPORT_COMMAND's table (src/cli-options/commands.ts). */
function parse(args: readonly string[]): { out?: string } | 'help' {
  const parsed = parseCli(AUDIT_EXPORT_COMMAND, args);
  if (parsed.help) return 'help';
  const out = optionValue(parsed, '--out');
  return out !== undefined ? { out } : {};
}

export async function runAuditExport(
  args: readonly string[],
  env: Record<string, string | undefined>,
  io: AuditExportIo = { stdout: process.stdout, stderr: process.stderr },
): Promise<number> {
  const read = readCommandArgs(AUDIT_EXPORT_COMMAND, () => parse(args), io);
  if ('exit' in read) return read.exit;
  const parsed = read.options;
  let redis: Redis | undefined;
  try {
    const config = parseConfig(env, 'none');
    const policy = await loadPolicy(config.GPUOPS_POLICY);
    const connected = await connectOnce(config);
    redis = connected.redis;
    const audit = createAudit(redis, {
      ...(connected.clustered ? { prefix: CLUSTER_STORE_PREFIX } : {}),
      retentionSeconds: policy.audit.retentionSeconds,
      log: createLogger({ level: 'silent' }),
    });
    if (parsed.out) {
      const path = resolve(parsed.out);
      await mkdir(dirname(path), { recursive: true });
      const file = createWriteStream(path);
      const count = await audit.exportJsonLines(file);
      file.end();
      await finished(file);
      io.stderr.write(`Wrote ${count} audit entries to ${parsed.out}.\n`);
    } else {
      await audit.exportJsonLines(io.stdout);
    }
    return 0;
  } catch (err) {
    return toolFailed('audit', err, io.stderr);
  } finally {
    redis?.disconnect();
  }
}
