// The Slack app gpuops needs, as a manifest Slack accepts when you create the app ("From an app
// manifest"). manifests/*.json are generated from this, and a test keeps them in step with the code.

import { stepFunctions } from '../commands/workflow/step-manifest.js';

/** The one slash command; every subcommand lives in its text. */
export const SLASH_COMMAND = '/gpu';
/** Where Slack sends commands, interactions and events in HTTP mode. */
export const EVENTS_PATH = '/slack/events';

/**
 * The bot scopes, each with the reason it is needed — and nothing more. `npm run manifests` prints
 * them as the table in docs/operations.md ("The Slack app's scopes"), which a test keeps in step.
 */
export const BOT_SCOPES = {
  commands: 'receive /gpu',
  'chat:write': 'post the request message and edit it in place as the job moves; ephemeral answers',
  // Kept: gpuops does post where nobody invited it, and asking teams to invite it everywhere first
  // would turn every first /gpu in a public channel into a failure.
  'chat:write.public':
    'post and edit in public channels that never invited the bot: /gpu works in any channel, and the policy (approvals.channel, audit.channel) and /gpu watch name channels without anyone inviting it',
  'users:read':
    'read the requester profile to derive a POSIX username for /gpu slurm adduser, and the time zone of whoever makes or lists a /gpu schedule',
  'usergroups:read': 'resolve approvers and roles granted to user groups (policy)',
  'im:write':
    'open a direct message to send a kubeconfig, a lease reminder or an idle-GPU alert to one person only',
  'files:write': 'upload PNG metric snapshots, the Home tab spend chart and kubeconfig files',
} as const;

/**
 * Events the bot subscribes to (Events API or Socket Mode), neither needing a scope: app_home_opened
 * tells gpuops to publish someone's Home tab; function_executed runs its Workflow Builder steps
 * (docs/workflows.md).
 */
export const BOT_EVENTS = ['app_home_opened', 'function_executed'] as const;

/** The scopes as a Markdown table, for docs/operations.md. */
export function scopesTable(): string {
  const rows = Object.entries(BOT_SCOPES).map(([scope, why]) => `| \`${scope}\` | ${why} |`);
  return ['| scope | why gpuops needs it |', '|---|---|', ...rows].join('\n');
}

export interface ManifestOptions {
  /** Public base URL of the web role, e.g. https://gpuops.example.com (HTTP mode only). */
  readonly baseUrl?: string;
  readonly socketMode: boolean;
}

export function appManifest(options: ManifestOptions): Record<string, unknown> {
  const requestUrl = `${(options.baseUrl ?? 'https://gpuops.example.com').replace(/\/+$/, '')}${EVENTS_PATH}`;
  return {
    _metadata: { major_version: 1, minor_version: 1 },
    display_information: {
      name: 'gpuops',
      description: 'Start, stop and create GPU machines, join Slurm, see prices, capacity and GPU load.',
      background_color: '#1d3557',
    },
    features: {
      bot_user: { display_name: 'gpuops', always_online: true },
      // The Home tab shows each person their machines, approvals and spend (docs/home.md). The bot DMs
      // (kubeconfigs, lease reminders, alerts) but nothing reads messages sent to it: a read-only tab
      // says so instead of swallowing what people type there.
      app_home: {
        home_tab_enabled: true,
        messages_tab_enabled: true,
        messages_tab_read_only_enabled: true,
      },
      slash_commands: [
        {
          command: SLASH_COMMAND,
          description: 'GPU cloud operations: machines, clusters, Slurm, keys, metrics',
          usage_hint: 'help | ls | create <name> <type> | start <instance> | metrics <instance>',
          should_escape: true,
          ...(options.socketMode ? {} : { url: requestUrl }),
        },
      ],
    },
    oauth_config: { scopes: { bot: Object.keys(BOT_SCOPES) } },
    settings: {
      event_subscriptions: {
        ...(options.socketMode ? {} : { request_url: requestUrl }),
        bot_events: [...BOT_EVENTS],
      },
      interactivity: { is_enabled: true, ...(options.socketMode ? {} : { request_url: requestUrl }) },
      // Custom steps need an org-ready app; the steps run in gpuops itself, not on Slack.
      org_deploy_enabled: true,
      socket_mode_enabled: options.socketMode,
      token_rotation_enabled: false,
      function_runtime: 'remote',
    },
    functions: stepFunctions(),
  };
}
