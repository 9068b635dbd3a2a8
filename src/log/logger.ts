import { type DestinationStream, type Logger, pino } from 'pino';

export type { Logger } from 'pino';

// Secrets are removed by path before a line is written, wherever they sit in the object logged.
// Keys, not values, decide: a token under any of these names never reaches a log.
const SECRET_KEYS = [
  'authorization',
  'Authorization',
  'token',
  'accessToken',
  'access_token',
  'botToken',
  'appToken',
  'apiKey',
  'api_key',
  'api-key',
  'clientSecret',
  'client_secret',
  'signingSecret',
  'password',
  'secret',
  'kubeconfig',
  'userData',
  'user_data',
  'privateKey',
];

export const REDACT_PATHS = [
  ...SECRET_KEYS.map((k) => (/^[A-Za-z_]+$/.test(k) ? k : `["${k}"]`)),
  ...SECRET_KEYS.map((k) => (/^[A-Za-z_]+$/.test(k) ? `*.${k}` : `*["${k}"]`)),
  ...SECRET_KEYS.map((k) => (/^[A-Za-z_]+$/.test(k) ? `*.*.${k}` : `*.*["${k}"]`)),
];

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

/** JSON lines, secrets removed by path and by shape. */
export function createLogger(options: LoggerOptions = {}): Logger {
  return pino(
    {
      level: options.level ?? 'info',
      name: options.name ?? 'gpuops',
      base: { pid: process.pid },
      redact: { paths: REDACT_PATHS, censor: '[redacted]' },
      formatters: { level: (label) => ({ level: label }) },
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
}
