import { SHAPES } from '../cloud/shape.js';
import { METRIC_NAMES } from '../metrics/catalog.js';
import { RANGE_BOUNDS } from '../metrics/range-rule.js';
import type { CliCommand } from './options.js';

// The table of every `gpuops` subcommand and its options. The parsers (src/cli.ts, src/sim/run-sim.ts,
// src/snapshot/run-snapshot.ts, src/demo/demo-args.ts, src/audit/run-audit-export.ts) read their
// options from here; `--help`, `gpuops help` and the README's table are rendered from here. Kept free
// of heavy imports: `gpuops help` loads nothing else.

const shapes = SHAPES.join('|');

const BOT_NOTES = [
  'Configured by the environment, not by options: SLACK_BOT_TOKEN, SLACK_SIGNING_SECRET (or SLACK_APP_TOKEN with SLACK_SOCKET_MODE=true), REDIS_URL, CLOUD_API_URL, CLOUD_API_SHAPE, CLOUD_API_TOKEN, CLOUD_PROJECT_ID, GPUOPS_POLICY, PORT, LOG_LEVEL and the rest in .env.example; docs/operations.md says how to run it.',
];

export const START_COMMAND: CliCommand = {
  name: 'start',
  summary:
    'the bot in the role ROLE names (default all: listener and workers in one process); /slack/events on PORT, /healthz, /readyz and /metrics on OPS_PORT; SIGTERM drains it',
  options: [],
  notes: BOT_NOTES,
};

export const WEB_COMMAND: CliCommand = {
  name: 'web',
  summary: 'the listener only (POST /slack/events, or Socket Mode with SLACK_SOCKET_MODE=true)',
  options: [],
  notes: BOT_NOTES,
};

export const WORKER_COMMAND: CliCommand = {
  name: 'worker',
  summary: 'the workers only; run as many as you like against the same Redis',
  options: [],
  notes: BOT_NOTES,
};

export const SIM_COMMAND: CliCommand = {
  name: 'sim',
  summary:
    'the cloud simulator; prints one JSON line with every URL and credential when ready, serves until SIGTERM or Ctrl-C',
  options: [
    {
      flag: '--port',
      value: 'N',
      description: 'port to listen on; 0 picks a free port, shown in the ready line',
      default: '0',
    },
    { flag: '--host', value: 'H', description: 'address to bind', default: '127.0.0.1' },
    { flag: '--shape', value: shapes, description: 'shape of the infrastructure API', default: 'B' },
    { flag: '--seed', value: 'N', description: 'seed for ids, addresses and metric patterns', default: '1' },
    {
      flag: '--clock',
      value: 'real|manual',
      description: 'manual moves time only through POST /_sim/clock',
      default: 'real',
    },
    {
      flag: '--transition-ms',
      value: 'N',
      description: 'how long state transitions take on the clock, in milliseconds',
      default: '2000',
    },
    { flag: '--no-metrics', description: 'do not start the metrics side (/read, /exporter)' },
    {
      flag: '--env',
      description:
        'print the ready line as shell export lines of the settings gpuops reads (CLOUD_API_URL, …) instead of JSON',
    },
  ],
  notes: ['See docs/simulator.md.'],
};

export const SNAPSHOT_COMMAND: CliCommand = {
  name: 'snapshot',
  summary:
    "write the PNG GPU chart /gpu metrics would post to a file, and print its text summary; reads the metrics API at METRICS_URL with METRICS_API_KEY (or client credentials), which gpuops sim --env prints for the simulator's",
  args: [
    {
      name: '<instance>',
      description: "instance id (uuid) or name; names are looked up through the metrics' instance_name label",
    },
  ],
  options: [
    { flag: '--out', short: '-o', value: 'FILE', description: 'PNG file to write', required: true },
    {
      flag: '--metric',
      short: '-m',
      value: METRIC_NAMES.join('|'),
      description: 'which GPU metric',
      default: 'util',
    },
    {
      flag: '--range',
      short: '-r',
      value: 'RANGE',
      description: `how far back, ${RANGE_BOUNDS}: 15m, 1h, 6h, 1d`,
      default: '1h',
    },
    {
      flag: '--end',
      value: 'TIME',
      description: 'end of the range: RFC 3339 or unix seconds',
      default: 'now',
    },
  ],
  notes: [
    'Reads METRICS_URL and METRICS_API_KEY (or METRICS_CLIENT_ID, METRICS_CLIENT_SECRET, METRICS_AUTH_URL); see docs/metrics.md.',
  ],
};

export const DEMO_COMMAND: CliCommand = {
  name: 'demo',
  summary:
    'everything on this machine (simulator, Redis, the bot) with a terminal chat in place of Slack; see docs/demo.md',
  options: [
    {
      flag: '--script',
      value: 'FILE',
      description:
        "read the chat's lines from FILE (- for standard input) instead of a prompt; standard input that is not a terminal is read the same way",
      default: 'a prompt',
    },
    {
      flag: '--shape',
      value: shapes,
      description: 'shape of the simulated cloud API (Slurm users need A)',
      default: 'B',
    },
    {
      flag: '--files',
      value: 'DIR',
      description: 'keep the files the bot uploads (metric charts) in DIR',
      default: 'a temporary folder removed at exit',
    },
    {
      flag: '--log',
      value: 'FILE',
      description:
        "append the bot's JSON logs to FILE at LOG_LEVEL (default info); without it, errors go to standard error",
    },
    {
      flag: '--no-metrics',
      description: 'do not start Prometheus (/gpu metrics then says metrics are not configured)',
    },
    {
      flag: '--timeout',
      value: 'SECONDS',
      description: 'how long a script line may take to settle before it counts as failed',
      default: '120',
    },
    {
      flag: '--transition-ms',
      value: 'N',
      description: 'how long the simulated machines take to start, stop and be created, in milliseconds',
      default: '2000',
    },
    {
      flag: '--budget',
      value: 'USD',
      description:
        "the monthly amount of the team's budget (demo-team); a few dollars makes it alert at start too, and creates then wait for bob as its owner",
      default: '250000',
    },
  ],
  notes: [
    'A script exits 1 when any of its lines failed, listing each with its line number and the reason the chat gave (docs/demo.md says what counts as failed).',
    "Environment: REDIS_URL (a Redis of the demo's own; default a private redis-server), LOG_LEVEL, NO_COLOR.",
  ],
};

export const AUDIT_EXPORT_COMMAND: CliCommand = {
  name: 'audit export',
  summary:
    "the audit trail as JSON lines, oldest first, within the policy's retention (audit.retention, default 30d)",
  options: [
    { flag: '--out', short: '-o', value: 'FILE', description: 'file to write', default: 'standard output' },
  ],
  notes: [
    'One JSON object a line: event, actor, approver, operation, target, project, parameters (secrets removed), outcome, durationMs, jobId, approvalId, channel, at (ms) and id.',
    'Reads REDIS_URL (default redis://127.0.0.1:6379) and GPUOPS_POLICY; see docs/policy.md.',
  ],
};

export const SPEND_EXPORT_COMMAND: CliCommand = {
  name: 'spend export',
  summary: "a month's spend as CSV, one row per machine and day, from the spend ledger (docs/budgets.md)",
  options: [
    {
      flag: '--month',
      value: 'YYYY-MM',
      description: 'the calendar month, in the digest time zone',
      required: true,
    },
    { flag: '--out', short: '-o', value: 'FILE', description: 'file to write', default: 'standard output' },
  ],
  notes: [
    'Columns: date, project, instance, owner, type, hours, usd (owner empty for machines made outside gpuops).',
    'Reads REDIS_URL (default redis://127.0.0.1:6379) and GPUOPS_POLICY; see docs/budgets.md.',
  ],
};

/** Every subcommand, in the order help lists them. */
export const CLI_COMMANDS: readonly CliCommand[] = [
  START_COMMAND,
  WEB_COMMAND,
  WORKER_COMMAND,
  SIM_COMMAND,
  SNAPSHOT_COMMAND,
  DEMO_COMMAND,
  AUDIT_EXPORT_COMMAND,
  SPEND_EXPORT_COMMAND,
];
