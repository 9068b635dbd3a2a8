import type { Writable } from 'node:stream';
import type { Redis } from 'ioredis';
import { z } from 'zod';
import type { QueuedCommand } from '../jobs/job-data.js';
import { type Logger, redactText } from '../log/logger.js';

// The audit trail: one Redis stream, trimmed to the policy's retention (approximate MINID trimming, so
// Redis drops whole nodes cheaply; reads never show an entry older than the retention). Every entry
// is also logged as one JSON line. Parameters are scrubbed before they are stored: a secret-looking
// key is dropped and token-shaped text is masked, wherever it sits.

export const AUDIT_EVENTS = ['request', 'decision', 'start', 'outcome'] as const;
export type AuditEvent = (typeof AUDIT_EVENTS)[number];

export interface AuditInput {
  /** request (accepted, refused or sent for approval), decision (approve/deny/expiry), start, outcome. */
  readonly event: AuditEvent;
  /** Slack user id of who asked, or `gpuops` for what the bot does by itself. */
  readonly actor: string;
  readonly approver?: string;
  /** The /gpu kind, e.g. `k8s.pool.add`. */
  readonly operation: string;
  /** What it acts on: `train-01`, `prod/gpu-a`. */
  readonly target?: string;
  readonly project?: string;
  /** Scrubbed before storing: see scrubParameters. */
  readonly parameters?: Readonly<Record<string, unknown>>;
  /** queued, needs-approval, refused, approved, denied, expired, done, failed… */
  readonly outcome?: string;
  readonly durationMs?: number;
  readonly jobId?: string;
  readonly approvalId?: string;
  readonly channel?: string;
  /** Epoch ms; default the audit's clock. */
  readonly at?: number;
}

export interface AuditEntry extends AuditInput {
  /** The stream entry id. */
  readonly id: string;
  readonly at: number;
  readonly parameters: Readonly<Record<string, unknown>>;
}

/**
 * An entry scrubbed and serialised, for a caller that writes it with other writes in one step
 * (Store.acceptJob): `XADD key MINID ~ minId <idMs>-* entry json`, then `written` with the id.
 */
export interface PreparedEntry {
  readonly key: string;
  readonly minId: string;
  readonly idMs: number;
  readonly json: string;
  /** Logs and publishes the entry as append does, once the caller stored it under `id`. */
  written(id: string): AuditEntry;
}

export interface Audit {
  readonly key: string;
  append(input: AuditInput): Promise<AuditEntry>;
  /** The entry append would store, for a caller that stores it itself (see PreparedEntry). */
  prepare(input: AuditInput): PreparedEntry;
  /** The newest `n` entries within the retention, newest first. */
  latest(n: number): Promise<AuditEntry[]>;
  /** Writes every entry within the retention, oldest first, one JSON object a line; returns the count. */
  exportJsonLines(out: Writable): Promise<number>;
}

export interface AuditOptions {
  readonly prefix?: string;
  /** From the policy's audit.retention. */
  readonly retentionSeconds: number;
  readonly log: Logger;
  /** Default Date.now; tests move it to show trimming. */
  readonly clock?: () => number;
  /** Also shows each entry elsewhere (the policy's audit channel); its failures are logged, never thrown. */
  readonly publish?: (entry: AuditEntry) => Promise<unknown>;
}

// Key names, compared without case or separators: `user_data`, `userData` and `USER-DATA` are one.
const SECRET_KEY_PARTS = [
  'token',
  'secret',
  'password',
  'passwd',
  'apikey',
  'authorization',
  'kubeconfig',
  'userdata',
  'privatekey',
  'credential',
  'cookie',
  'signature',
  // Slack's response_url lets whoever holds it post to the channel for 30 minutes.
  'responseurl',
];

/** True for a key whose value is never stored; public keys are not secret and stay. */
export function isSecretKey(key: string): boolean {
  const k = key.toLowerCase().replace(/[^a-z0-9]/g, '');
  return SECRET_KEY_PARTS.some((part) => k.includes(part));
}

const MAX_TEXT = 2_000;
const MAX_DEPTH = 6;

function scrubText(text: string): string {
  if (/-----BEGIN [A-Z ]*PRIVATE KEY-----/.test(text)) return '[redacted private key]';
  if (/\bapiVersion:/.test(text) && /\bclusters:/.test(text)) return '[redacted kubeconfig]';
  const masked = redactText(text);
  return masked.length > MAX_TEXT ? `${masked.slice(0, MAX_TEXT)}…` : masked;
}

/** A copy with secret-looking keys dropped and token-shaped text masked, at any depth. */
export function scrubParameters(value: unknown, depth = 0): unknown {
  if (typeof value === 'string') return scrubText(value);
  if (value === null || typeof value !== 'object') return value;
  if (depth >= MAX_DEPTH) return '[nested too deep]';
  if (Array.isArray(value)) return value.map((v) => scrubParameters(v, depth + 1));
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) {
    if (isSecretKey(k) || v === undefined) continue;
    out[k] = scrubParameters(v, depth + 1);
  }
  return out;
}

/** operation, target and parameters of a /gpu command, ready for an audit entry. */
export function auditFieldsOf(command: QueuedCommand): {
  operation: string;
  target?: string;
  parameters: Record<string, unknown>;
} {
  const { kind, ...rest } = command;
  const parts = ['cluster', 'instance', 'name', 'pool', 'user', 'project', 'id']
    .map((f) => rest[f])
    .filter((v): v is string => typeof v === 'string');
  return {
    operation: kind,
    ...(parts.length > 0 ? { target: parts.join('/') } : {}),
    parameters: scrubParameters(rest) as Record<string, unknown>,
  };
}

const storedSchema = z.looseObject({
  event: z.enum(AUDIT_EVENTS),
  actor: z.string(),
  operation: z.string(),
  at: z.number(),
  parameters: z.record(z.string(), z.unknown()),
});

const FIELD = 'entry';

function parseEntry(id: string, fields: readonly string[]): AuditEntry | undefined {
  const i = fields.indexOf(FIELD);
  const raw = i >= 0 ? fields[i + 1] : undefined;
  if (raw === undefined) return undefined;
  try {
    const parsed = storedSchema.safeParse(JSON.parse(raw));
    return parsed.success ? ({ ...(parsed.data as object), id } as AuditEntry) : undefined;
  } catch {
    return undefined;
  }
}

export function createAudit(redis: Redis, options: AuditOptions): Audit {
  const key = `${options.prefix ?? 'gpuops'}:audit`;
  const clock = options.clock ?? Date.now;
  const retentionMs = options.retentionSeconds * 1000;
  const minId = () => `${Math.max(0, clock() - retentionMs)}`;
  // The entry is scrubbed at every depth before it is stored or logged, so its line skips the
  // logger's own redaction by key name (work saved on every request).
  const lineLog = options.log.child({}, { formatters: { log: (entry: object) => entry } });

  const prepare = (input: AuditInput): PreparedEntry => {
    const now = clock();
    const { parameters, ...rest } = input;
    const text = (v: string | undefined) => (v === undefined ? undefined : scrubText(v));
    const clean = Object.fromEntries(
      Object.entries({
        ...rest,
        actor: text(rest.actor),
        approver: text(rest.approver),
        target: text(rest.target),
        outcome: text(rest.outcome),
        at: rest.at ?? now,
        parameters: scrubParameters(parameters ?? {}),
      }).filter(([, v]) => v !== undefined),
    ) as Omit<AuditEntry, 'id'>;
    return {
      key,
      minId: minId(),
      // The id carries the audit's clock so retention follows it; Redis adds the sequence number.
      idMs: now,
      json: JSON.stringify(clean),
      written(id) {
        const entry = { ...clean, id } as AuditEntry;
        lineLog.info({ audit: entry }, 'audit');
        options
          .publish?.(entry)
          .catch((err: unknown) =>
            options.log.warn({ err }, 'could not post an audit entry to the audit channel'),
          );
        return entry;
      },
    };
  };

  return {
    key,
    prepare,

    async append(input) {
      const entry = prepare(input);
      let id: string | null;
      try {
        id = await redis.xadd(key, 'MINID', '~', entry.minId, `${entry.idMs}-*`, FIELD, entry.json);
      } catch (err) {
        // Another replica's clock ran ahead: let Redis pick the next id.
        if (!/equal or smaller/i.test(String((err as Error).message))) throw err;
        id = await redis.xadd(key, 'MINID', '~', entry.minId, '*', FIELD, entry.json);
      }
      return entry.written(id ?? '');
    },

    async latest(n) {
      const rows = await redis.xrevrange(key, '+', minId(), 'COUNT', Math.max(1, Math.floor(n)));
      return rows.flatMap(([id, fields]) => {
        const entry = parseEntry(id, fields);
        return entry ? [entry] : [];
      });
    },

    async exportJsonLines(out) {
      let start = minId();
      let count = 0;
      for (;;) {
        const rows = await redis.xrange(key, start, '+', 'COUNT', 500);
        for (const [id, fields] of rows) {
          const entry = parseEntry(id, fields);
          if (!entry) continue;
          if (!out.write(`${JSON.stringify(entry)}\n`)) {
            await new Promise<void>((resolve, reject) => {
              const done = (err?: Error) => {
                out.off('drain', done);
                out.off('error', done);
                if (err) reject(err);
                else resolve();
              };
              out.on('drain', done);
              out.on('error', done);
            });
          }
          count += 1;
        }
        const last = rows.at(-1);
        if (!last || rows.length < 500) return count;
        start = `(${last[0]}`;
      }
    },
  };
}
