import { type DestinationStream, type Logger, pino } from 'pino';

export type { Logger } from 'pino';

// Secrets are removed by key name before a line is written, at any depth of the object logged (and of a
// child logger's bindings). Keys, not values, decide: a key is split into its words (camelCase, snake_case,
// kebab-case) and any word naming a secret hides its value, so `bot_access_token` and `x-api-key` are
// caught as well as `token`. Free text is masked by shape in redactText below.
const SECRET_WORDS = new Set([
  'token',
  'tokens',
  'secret',
  'secrets',
  'password',
  'passwd',
  'passphrase',
  'pwd',
  'key',
  'keys',
  'apikey',
  'authorization',
  'auth',
  'cookie',
  'cookies',
  'kubeconfig',
  'private',
  'credential',
  'credentials',
  'signature',
  'sig',
  'bearer',
  'session',
]);
/** Whole names that are secrets though none of their words is: cloud-init user data carries anything. */
const SECRET_NAMES = new Set([
  'userdata',
  'user_data',
  'user-data',
  'setcookie',
  'responseurl',
  'response_url',
]);

const REDACTED = '[redacted]';
/** Objects nested deeper than this are cut rather than walked: a log line is never worth unbounded work. */
const MAX_DEPTH = 8;
/** At most this many keys or items per object or array are walked; the rest are summarised. */
const MAX_ENTRIES = 200;

/** True when a key's name says its value is a secret (any word of it, in any case or separator style). */
export function isSecretKey(key: string): boolean {
  if (SECRET_NAMES.has(key.toLowerCase())) return true;
  const words = key
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .replace(/([A-Z]+)([A-Z][a-z])/g, '$1 $2')
    .toLowerCase()
    .split(/[^a-z0-9]+/);
  return words.some((w) => SECRET_WORDS.has(w));
}

function isPlain(value: object): boolean {
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

/**
 * A copy of `value` with the value of every secret-named key replaced, at any depth (bounded by
 * MAX_DEPTH and MAX_ENTRIES; cycles are cut). Errors, Buffers and other class instances are left for
 * their serializers, which read only fields known to be safe.
 */
export function redactSecrets(value: unknown, depth = 0, seen: WeakSet<object> = new WeakSet()): unknown {
  if (value === null || typeof value !== 'object') return value;
  if (!Array.isArray(value) && !isPlain(value)) return value;
  if (seen.has(value)) return '[circular]';
  if (depth >= MAX_DEPTH) return '[nested too deep to log]';
  seen.add(value);
  try {
    if (Array.isArray(value)) {
      const items = value.slice(0, MAX_ENTRIES).map((v) => redactSecrets(v, depth + 1, seen));
      if (value.length > MAX_ENTRIES) items.push(`[${value.length - MAX_ENTRIES} more items]`);
      return items;
    }
    const out: Record<string, unknown> = {};
    const keys = Object.keys(value);
    for (const key of keys.slice(0, MAX_ENTRIES)) {
      const v = (value as Record<string, unknown>)[key];
      out[key] =
        isSecretKey(key) && v !== undefined && v !== null ? REDACTED : redactSecrets(v, depth + 1, seen);
    }
    if (keys.length > MAX_ENTRIES) out['…'] = `${keys.length - MAX_ENTRIES} more keys`;
    return out;
  } finally {
    seen.delete(value);
  }
}

/** Masks token-shaped strings inside free text (error messages, URLs) that path redaction cannot see. */
export function redactText(text: string): string {
  return text
    .replace(/xox[abposr]-[A-Za-z0-9-]+/g, 'xox?-[redacted]')
    .replace(/xapp-[A-Za-z0-9-]+/g, 'xapp-[redacted]')
    .replace(/(Bearer\s+)[A-Za-z0-9._~+/=-]+/gi, '$1[redacted]')
    .replace(/eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]*/g, '[jwt redacted]');
}

export interface LoggerOptions {
  readonly level?: string;
  readonly name?: string;
  /** Where lines go; default stdout. Tests pass a stream to read them back. */
  readonly destination?: DestinationStream;
}

/** JSON lines, secrets removed by key name (any depth) and by shape. */
export function createLogger(options: LoggerOptions = {}): Logger {
  const logger = pino(
    {
      level: options.level ?? 'info',
      name: options.name ?? 'gpuops',
      base: { pid: process.pid },
      formatters: {
        level: (label) => ({ level: label }),
        bindings: (bindings) => redactSecrets(bindings) as Record<string, unknown>,
        log: (object) => redactSecrets(object) as Record<string, unknown>,
      },
      hooks: {
        // Free-text messages and error messages can carry a token pasted by a user or echoed by a server.
        logMethod(args, method) {
          const masked = args.map((a) => (typeof a === 'string' ? redactText(a) : a)) as typeof args;
          method.apply(this, masked);
        },
      },
      serializers: {
        err: (err: unknown) => {
          const e = err as { name?: string; message?: string; code?: string; status?: number };
          return {
            type: e?.name,
            message: redactText(String(e?.message ?? err)),
            code: e?.code,
            status: e?.status,
          };
        },
      },
    },
    options.destination ?? pino.destination({ dest: 1, sync: false }),
  );
  // pino passes a child's bindings through no formatter of ours: scrub them on the way in, for
  // children of children too (they inherit this method).
  const child = logger.child;
  logger.child = function redactedChild(this: Logger, bindings, childOptions) {
    return child.call(this, redactSecrets(bindings) as typeof bindings, childOptions);
  } as typeof logger.child;
  return logger;
}
