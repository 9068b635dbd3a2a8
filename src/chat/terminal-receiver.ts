import type { App, Receiver } from '@slack/bolt';

// A Bolt Receiver for the terminal chat: instead of Slack's HTTP requests or Socket Mode envelopes, the
// chat hands it the same bodies Slack would send (slash commands, block_actions, view_submission), and
// it passes them to `app.processEvent` with an `ack` that keeps what the listener acknowledged with.
// The listeners cannot tell the difference: the demo runs exactly the code Slack reaches.

/** Who is acting and where, as Slack puts it in every request. */
export interface Actor {
  readonly teamId: string;
  readonly userId: string;
  /** Account name, e.g. ada. */
  readonly userName: string;
  readonly channelId: string;
  readonly channelName: string;
}

export interface Delivered {
  /** False when no listener acknowledged (nothing handled the request). */
  readonly acked: boolean;
  /** What the listener passed to ack(): a message for a slash command, a response_action for a form. */
  readonly response: unknown;
}

const APP_ID = 'A0DEMO';

export class TerminalReceiver implements Receiver {
  private app: App | undefined;
  private running = false;
  private inFlight = new Set<Promise<unknown>>();

  init(app: App): void {
    this.app = app;
  }

  async start(): Promise<void> {
    this.running = true;
  }

  /** Takes no more requests and waits for those being handled. */
  async stop(): Promise<void> {
    this.running = false;
    await Promise.allSettled([...this.inFlight]);
  }

  /** Delivers one request body to the app, as Slack's would arrive, and returns the acknowledgement. */
  async deliver(body: Record<string, unknown>): Promise<Delivered> {
    const app = this.app;
    if (!app || !this.running) throw new Error('The chat is not connected to the bot (it is stopping).');
    let acked = false;
    let response: unknown;
    const handled = app.processEvent({
      body,
      ack: async (answer?: unknown) => {
        if (acked) return;
        acked = true;
        response = answer;
      },
    });
    this.inFlight.add(handled);
    try {
      await handled;
    } finally {
      this.inFlight.delete(handled);
    }
    return { acked, response };
  }
}

/** The body Slack sends for `/gpu <text>` (form fields, as Bolt parses them). */
export function slashCommandBody(
  actor: Actor,
  text: string,
  ids: { readonly responseUrl: string; readonly triggerId: string },
): Record<string, unknown> {
  return {
    token: 'demo',
    team_id: actor.teamId,
    team_domain: 'gpuops-demo',
    channel_id: actor.channelId,
    channel_name: actor.channelName,
    user_id: actor.userId,
    user_name: actor.userName,
    command: '/gpu',
    text,
    api_app_id: APP_ID,
    is_enterprise_install: 'false',
    response_url: ids.responseUrl,
    trigger_id: ids.triggerId,
  };
}

function userOf(actor: Actor): Record<string, string> {
  return { id: actor.userId, username: actor.userName, name: actor.userName, team_id: actor.teamId };
}

export interface PressedButton {
  readonly actionId: string;
  readonly blockId?: string | undefined;
  readonly value?: string | undefined;
  readonly text: string;
}

/** A block_actions body: one button pressed on a message (or an ephemeral answer) or in a form. */
export function blockActionsBody(
  actor: Actor,
  button: PressedButton,
  where:
    | {
        readonly kind: 'message';
        readonly channelId: string;
        readonly message: {
          readonly ts?: string;
          readonly text?: string;
          readonly blocks?: readonly unknown[];
        };
        readonly ephemeral: boolean;
        readonly responseUrl: string;
      }
    | { readonly kind: 'view'; readonly view: Record<string, unknown> },
  triggerId: string,
): Record<string, unknown> {
  const action = {
    type: 'button',
    action_id: button.actionId,
    block_id: button.blockId ?? 'actions',
    text: { type: 'plain_text', text: button.text, emoji: true },
    ...(button.value !== undefined ? { value: button.value } : {}),
    action_ts: (Date.now() / 1000).toFixed(6),
  };
  const common = {
    type: 'block_actions',
    user: userOf(actor),
    api_app_id: APP_ID,
    token: 'demo',
    trigger_id: triggerId,
    team: { id: actor.teamId, domain: 'gpuops-demo' },
    enterprise: null,
    is_enterprise_install: false,
    state: { values: {} },
    actions: [action],
  };
  if (where.kind === 'view') {
    return { ...common, container: { type: 'view', view_id: where.view.id }, view: where.view };
  }
  return {
    ...common,
    container: {
      type: 'message',
      message_ts: where.message.ts,
      channel_id: where.channelId,
      is_ephemeral: where.ephemeral,
    },
    channel: {
      id: where.channelId,
      name: where.channelId === actor.channelId ? actor.channelName : where.channelId,
    },
    message: {
      type: 'message',
      ts: where.message.ts,
      text: where.message.text ?? '',
      blocks: where.message.blocks ?? [],
    },
    response_url: where.responseUrl,
  };
}

/** A view_submission body: Submit pressed on a form with these field states. */
export function viewSubmissionBody(
  actor: Actor,
  view: {
    readonly id: string;
    readonly hash: string;
    readonly view: Record<string, unknown>;
    readonly parentId?: string | undefined;
  },
  values: Readonly<Record<string, Readonly<Record<string, unknown>>>>,
  triggerId: string,
): Record<string, unknown> {
  return {
    type: 'view_submission',
    team: { id: actor.teamId, domain: 'gpuops-demo' },
    user: userOf(actor),
    api_app_id: APP_ID,
    token: 'demo',
    trigger_id: triggerId,
    enterprise: null,
    is_enterprise_install: false,
    view: {
      ...view.view,
      id: view.id,
      team_id: actor.teamId,
      type: 'modal',
      private_metadata: view.view.private_metadata ?? '',
      callback_id: view.view.callback_id ?? '',
      blocks: view.view.blocks ?? [],
      state: { values },
      hash: view.hash,
      root_view_id: view.parentId ?? view.id,
      previous_view_id: view.parentId ?? null,
      app_id: APP_ID,
    },
    response_urls: [],
  };
}

/** The Events API body Slack sends when someone opens the app's Home tab. */
export function homeOpenedBody(actor: Actor, dmChannel: string): Record<string, unknown> {
  return {
    token: 'demo',
    team_id: actor.teamId,
    api_app_id: APP_ID,
    type: 'event_callback',
    event_id: `Ev${Date.now().toString(36).toUpperCase()}`,
    event_time: Math.floor(Date.now() / 1000),
    event: {
      type: 'app_home_opened',
      user: actor.userId,
      channel: dmChannel,
      tab: 'home',
      event_ts: (Date.now() / 1000).toFixed(6),
    },
  };
}
