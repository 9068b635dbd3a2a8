import { z } from 'zod';
import { SHAPES } from './cloud/shape.js';

// The only reader of process.env. Everything else takes a frozen Config.

export type { Shape } from './cloud/shape.js';
export const ROLES = ['all', 'web', 'worker'] as const;
export type Role = (typeof ROLES)[number];

const optionalString = z
  .string()
  .trim()
  .transform((v) => (v === '' ? undefined : v))
  .optional();
const optionalUrl = z
  .string()
  .trim()
  .transform((v) => (v === '' ? undefined : v))
  .pipe(z.url({ protocol: /^https?$/, error: 'expected an http(s) URL' }).optional())
  .optional();
const uuid = z.uuid({ error: 'expected a UUID such as 3f1c2a9e-8b7d-4c1e-9f2a-1b2c3d4e5f60' });

export const envSchema = z.object({
  SLACK_BOT_TOKEN: optionalString,
  SLACK_SIGNING_SECRET: optionalString,
  SLACK_APP_TOKEN: optionalString,
  SLACK_SOCKET_MODE: z.stringbool({ error: 'expected true or false' }).default(false),
  SLACK_API_URL: z
    .url({ protocol: /^https?$/, error: 'expected an http(s) URL' })
    .default('https://slack.com/api/'),
  PORT: z.coerce.number({ error: 'expected a port number' }).int().min(0).max(65535).default(3000),
  /** Port of /readyz, /metrics (and /healthz): never the public port Slack's requests arrive on. */
  OPS_PORT: z.coerce.number({ error: 'expected a port number' }).int().min(0).max(65535).default(9090),
  REDIS_URL: z
    .string()
    .regex(/^rediss?:\/\//, { error: 'expected a redis:// or rediss:// URL' })
    .default('redis://127.0.0.1:6379'),
  /**
   * Redis Sentinel: the sentinels as comma-separated host:port. With REDIS_SENTINEL_MASTER, every
   * connection asks them for the primary and follows a failover; REDIS_URL then gives only the
   * password, user and database.
   */
  REDIS_SENTINELS: z
    .string()
    .trim()
    .regex(/^$|^[^\s,:]+:\d{1,5}(\s*,\s*[^\s,:]+:\d{1,5})*$/, {
      error: 'expected comma-separated host:port pairs, such as sentinel-1:26379,sentinel-2:26379',
    })
    .transform((v) => (v === '' ? undefined : v))
    .optional(),
  /**
   * Redis Cluster: some of its nodes as comma-separated host:port (the rest are discovered). REDIS_URL
   * then gives only the password and user; a cluster has no databases.
   */
  REDIS_CLUSTER_NODES: z
    .string()
    .trim()
    .regex(/^$|^[^\s,:]+:\d{1,5}(\s*,\s*[^\s,:]+:\d{1,5})*$/, {
      error: 'expected comma-separated host:port pairs, such as redis-0:6379,redis-1:6379',
    })
    .transform((v) => (v === '' ? undefined : v))
    .optional(),
  /** The name the sentinels know the primary by (their `sentinel monitor <name> …`). */
  REDIS_SENTINEL_MASTER: optionalString,
  /** The sentinels' own password (their requirepass), when they have one. */
  REDIS_SENTINEL_PASSWORD: optionalString,
  /**
   * Replicas a new job must reach before the request is acknowledged (WAIT). Default 1 with
   * REDIS_SENTINELS or REDIS_CLUSTER_NODES, else 0; 0 turns the check off.
   */
  REDIS_WAIT_REPLICAS: z.coerce.number({ error: 'expected a whole number' }).int().min(0).max(16).optional(),
  /** How long an acknowledgement waits for the replicas, in ms (default 500). */
  REDIS_WAIT_MS: z.coerce.number({ error: 'expected milliseconds' }).int().min(1).max(1_200).default(500),
  ROLE: z.enum(ROLES, { error: 'expected one of all, web, worker' }).default('all'),
  LOG_LEVEL: z
    .enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'], {
      error: 'expected one of fatal, error, warn, info, debug, trace, silent',
    })
    .default('info'),
  GPUOPS_POLICY: optionalString,
  /**
   * 32-byte key (64 hex digits or base64) sealing form secrets (user data, kubeconfigs) in Redis.
   * Unset: derived from SLACK_BOT_TOKEN with HKDF-SHA256, so rotating the token voids sealed values in flight.
   */
  GPUOPS_SEAL_KEY: z
    .string()
    .trim()
    .transform((v) => (v === '' ? undefined : v))
    .pipe(
      z
        .string()
        .regex(/^(?:[0-9a-fA-F]{64}|[A-Za-z0-9+/]{43}=|[A-Za-z0-9_-]{43})$/, {
          error: 'expected 32 bytes as 64 hex digits or base64 (openssl rand -hex 32)',
        })
        .optional(),
    )
    .optional(),

  CLOUD_API_URL: optionalUrl,
  CLOUD_API_SHAPE: z.enum(SHAPES, { error: 'expected A, B or C' }).default('B'),
  CLOUD_API_TOKEN: optionalString,
  CLOUD_CLIENT_ID: optionalString,
  CLOUD_CLIENT_SECRET: optionalString,
  CLOUD_AUTH_URL: optionalUrl,
  CLOUD_AUDIENCE: optionalString,
  CLOUD_ORG_ID: optionalString,
  CLOUD_PROJECT_ID: uuid.optional(),
  /** JSON object of route overrides, e.g. {"addSlurmUser":"POST /slurm/clusters/{id}/users"}, or @path to a JSON file. */
  CLOUD_ROUTES: optionalString,
  CLOUD_TIMEOUT_MS: z.coerce.number({ error: 'expected milliseconds' }).int().positive().default(15_000),

  PLATFORM_API_URL: optionalUrl,
  PLATFORM_API_KEY: optionalString,

  METRICS_URL: optionalUrl,
  METRICS_API_KEY: optionalString,
  METRICS_CLIENT_ID: optionalString,
  METRICS_CLIENT_SECRET: optionalString,
  METRICS_AUTH_URL: optionalUrl,
  /** Defaults to METRICS_URL without its trailing /read, the "metrics server address" of the spec. */
  METRICS_AUDIENCE: optionalString,
  /** Label tying a GPU series to an instance id (docs/metrics.md); default instance_id. */
  METRICS_INSTANCE_LABEL: optionalString,
  /** Label carrying the instance name, used to resolve names to ids; default instance_name. */
  METRICS_NAME_LABEL: optionalString,
  /** Label carrying the project id; every /gpu metrics query selector is limited to the channel's project by it; default project_id. */
  METRICS_PROJECT_LABEL: optionalString,
  /** Series name overrides, e.g. util=DCGM_FI_DEV_GPU_UTIL,memory=DCGM_FI_DEV_FB_USED; default DCGM names. */
  METRICS_SERIES: optionalString,

  /**
   * OpenTelemetry traces (docs/operations.md, "Traces"): the collector's OTLP/HTTP base address, to
   * which /v1/traces is added. Unset: tracing is off and its SDK is never loaded.
   */
  OTEL_EXPORTER_OTLP_ENDPOINT: optionalUrl,
  /** Headers sent with every export (an API key of the collector's): key=value pairs, comma-separated. A secret. */
  OTEL_EXPORTER_OTLP_HEADERS: z
    .string()
    .trim()
    .regex(/^$|^[^\s=,]+=[^,]*(,\s*[^\s=,]+=[^,]*)*$/, {
      error: 'expected comma-separated key=value pairs, such as x-api-key=…,x-team=ml',
    })
    .transform((v) => (v === '' ? undefined : v))
    .optional(),
  /** The service.name of every span; default gpuops. */
  OTEL_SERVICE_NAME: z.string().trim().min(1).default('gpuops'),
});

export type Env = z.infer<typeof envSchema>;
export type Config = Readonly<Env>;

/** What the running command needs beyond the schema: each purpose adds its required keys. */
export type Purpose = 'bot' | 'cloud' | 'metrics' | 'none';

function requirements(env: Partial<Env>, purpose: Purpose): Array<{ key: keyof Env; why: string }> {
  const missing: Array<{ key: keyof Env; why: string }> = [];
  const need = (key: keyof Env, why: string) => {
    if (env[key] === undefined) missing.push({ key, why });
  };
  const cloud = () => {
    need('CLOUD_API_URL', 'the infrastructure API base URL');
    if (!env.CLOUD_API_TOKEN && !(env.CLOUD_CLIENT_ID && env.CLOUD_CLIENT_SECRET)) {
      missing.push({
        key: 'CLOUD_API_TOKEN',
        why: 'a static bearer token, or CLOUD_CLIENT_ID with CLOUD_CLIENT_SECRET for OAuth client credentials',
      });
    }
    if (env.CLOUD_CLIENT_ID && env.CLOUD_CLIENT_SECRET && !env.CLOUD_API_TOKEN) {
      need('CLOUD_AUTH_URL', 'the OAuth token server used with CLOUD_CLIENT_ID');
    }
  };
  if (env.REDIS_SENTINELS) need('REDIS_SENTINEL_MASTER', 'the name the sentinels know the primary by');
  if (purpose === 'cloud' || purpose === 'bot') cloud();
  if (purpose === 'metrics') {
    need('METRICS_URL', 'the metrics read API address ending in /read');
    if (!env.METRICS_API_KEY && !(env.METRICS_CLIENT_ID && env.METRICS_CLIENT_SECRET)) {
      missing.push({
        key: 'METRICS_API_KEY',
        why: 'a static API key, or METRICS_CLIENT_ID with METRICS_CLIENT_SECRET for OAuth client credentials',
      });
    }
    if (env.METRICS_CLIENT_ID && env.METRICS_CLIENT_SECRET && !env.METRICS_API_KEY) {
      need('METRICS_AUTH_URL', 'the OAuth token server used with METRICS_CLIENT_ID');
    }
  }
  if (purpose === 'bot') {
    need('SLACK_BOT_TOKEN', 'the bot token (xoxb-…) from the Slack app');
    if (env.SLACK_SOCKET_MODE)
      need('SLACK_APP_TOKEN', 'an app-level token (xapp-…), since SLACK_SOCKET_MODE=true');
    else if (env.ROLE !== 'worker')
      need('SLACK_SIGNING_SECRET', 'to verify requests Slack sends to /slack/events');
  }
  return missing;
}

export class ConfigError extends Error {
  readonly problems: readonly string[];
  constructor(problems: readonly string[]) {
    super(`Invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'ConfigError';
    this.problems = problems;
  }
}

/** Parses the environment. Reports every bad key by name and what it expects, never its value. */
export function parseConfig(raw: Record<string, string | undefined>, purpose: Purpose = 'none'): Config {
  // `KEY=` in an env file means unset, so defaults apply.
  const env = Object.fromEntries(Object.entries(raw).filter(([, v]) => v !== undefined && v.trim() !== ''));
  const result = envSchema.safeParse(env);
  if (!result.success) {
    const problems = result.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`);
    // Also name what is missing, judged on the raw values, so one run lists everything to fix.
    const present = { ...env, SLACK_SOCKET_MODE: env.SLACK_SOCKET_MODE === 'true' } as Partial<Env>;
    const missing = requirements(present, purpose).map((m) => `${m.key}: required, ${m.why}`);
    throw new ConfigError([...problems, ...missing]);
  }
  const missing = requirements(result.data, purpose);
  if (missing.length > 0) throw new ConfigError(missing.map((m) => `${m.key}: required, ${m.why}`));
  if (result.data.OPS_PORT !== 0 && result.data.OPS_PORT === result.data.PORT) {
    // One port would put /metrics and /readyz back on the door Slack (and anyone) reaches.
    throw new ConfigError(["OPS_PORT: must differ from PORT, which serves Slack's requests"]);
  }
  if (result.data.REDIS_CLUSTER_NODES && result.data.REDIS_SENTINELS) {
    throw new ConfigError([
      'REDIS_CLUSTER_NODES: set either it (Redis Cluster) or REDIS_SENTINELS (Sentinel), not both',
    ]);
  }
  return Object.freeze(result.data);
}

/** For the composition root: parse process.env or print the problems and exit 1. */
export function loadConfig(purpose: Purpose = 'none'): Config {
  try {
    return parseConfig(process.env, purpose);
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`${err.message}\nSee .env.example for every setting.\n`);
      process.exit(1);
    }
    throw err;
  }
}
