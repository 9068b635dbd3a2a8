import type { AnyMiddlewareArgs, Middleware } from '@slack/bolt';
import { type Deadline, isDeadlinePassed } from '../commands/kit/deadline.js';
import { mayUse, needsStanding } from '../policy/workspace-access.js';
import { ACCESS_TOO_SLOW, CHECK_RESERVE_MS, requestDeadline } from './request-deadline.js';
import { answerPress } from './response-url.js';
import type { SlackDeps } from './slack-deps.js';
import { standingOf } from './user-standing.js';

// Before every listener: a slash command, a button press or a form submission from a guest or from
// another workspace is refused with a sentence (unless the policy's access section allows it), so no
// listener, approval included, ever sees it. Someone refused who opens the Home tab sees the sentence
// there instead of their Home. Other events and options requests pass: they act for no one.

type Args = AnyMiddlewareArgs & {
  context?: Record<string, unknown>;
  ack?: (answer?: unknown) => Promise<void>;
  respond?: (answer: Record<string, unknown>) => Promise<unknown>;
  next: () => Promise<void>;
};

interface Caller {
  readonly kind: 'command' | 'action' | 'view' | 'home';
  readonly userId: string;
  readonly teamId: string | undefined;
  /** Where the command was typed or the button pressed, when the payload says. */
  readonly channelId?: string | undefined;
}

function callerOf(body: Record<string, unknown>): Caller | undefined {
  if (typeof body.command === 'string' && typeof body.user_id === 'string') {
    return {
      kind: 'command',
      userId: body.user_id,
      teamId: body.team_id as string | undefined,
      channelId: body.channel_id as string | undefined,
    };
  }
  const event = body.event as { type?: string; user?: string } | undefined;
  if (body.type === 'event_callback' && event?.type === 'app_home_opened' && typeof event.user === 'string') {
    return { kind: 'home', userId: event.user, teamId: body.team_id as string | undefined };
  }
  const user = body.user as { id?: string; team_id?: string } | undefined;
  const team = (body.team as { id?: string } | null | undefined)?.id;
  if (!user?.id) return undefined;
  if (body.type === 'block_actions') {
    // A press on the Home tab has no channel and no response_url: it is answered on the Home tab.
    if ((body.view as { type?: string } | undefined)?.type === 'home') {
      return { kind: 'home', userId: user.id, teamId: user.team_id ?? team };
    }
    const channel = (body.channel as { id?: string } | undefined)?.id;
    return { kind: 'action', userId: user.id, teamId: user.team_id ?? team, channelId: channel };
  }
  if (body.type === 'view_submission') return { kind: 'view', userId: user.id, teamId: user.team_id ?? team };
  return undefined;
}

const COULD_NOT_CHECK = (why: string) =>
  `I could not check your Slack account just now (Slack answered "${why}"), so nothing was done. Please try again in a minute.`;

async function refuse(deps: SlackDeps, args: Args, caller: Caller, text: string): Promise<void> {
  if (caller.kind === 'home') {
    await args.ack?.();
    await deps.client.views
      .publish({
        user_id: caller.userId,
        view: { type: 'home', blocks: [{ type: 'section', text: { type: 'mrkdwn', text } }] },
      })
      .catch((err: unknown) => deps.log.warn({ err }, 'could not publish a refused Home tab'));
    return;
  }
  if (caller.kind === 'command') {
    await args.ack?.({ response_type: 'ephemeral', text });
    return;
  }
  if (caller.kind === 'view') {
    await args.ack?.({
      response_action: 'update',
      view: {
        type: 'modal',
        title: { type: 'plain_text', text: 'gpuops' },
        blocks: [{ type: 'section', text: { type: 'mrkdwn', text } }],
      },
    });
    return;
  }
  await args.ack?.();
  await answerPress(
    deps,
    { respond: args.respond, userId: caller.userId, channelId: caller.channelId },
    text,
    'could not tell a refused press why',
  );
}

/**
 * Why `userId` (of `teamId`) may not use gpuops, in a sentence; undefined when they may. Guests and
 * other workspaces are refused unless the policy's access section allows them; a deactivated account
 * is refused whenever its standing is read (always, with `alwaysRead`: a workflow step's person, whom
 * no sign-in to Slack vouches for at the moment the step runs). With `deadline` (the request's), the
 * look-up stops in time for the answer.
 */
export async function callerRefusal(
  deps: SlackDeps,
  botTeamId: string | undefined,
  caller: {
    readonly userId: string;
    readonly teamId: string | undefined;
    readonly kind: string;
    readonly channelId?: string | undefined;
  },
  alwaysRead = false,
  deadline?: Deadline,
): Promise<string | undefined> {
  const { policy } = deps.guardrails;
  let guest: boolean | undefined;
  let homeTeamId: string | undefined;
  let deactivated: boolean | undefined;
  let enterpriseId: string | undefined;
  if (alwaysRead || needsStanding(policy)) {
    const standing = await standingOf(
      { client: deps.client, store: deps.store, log: deps.log },
      caller.userId,
      deadline ? { deadline, reserveMs: CHECK_RESERVE_MS } : undefined,
    ).catch((err: unknown) =>
      isDeadlinePassed(err) ? { unreadable: 'late' as const } : { unreadable: 'Redis did not answer' },
    );
    if (typeof standing === 'object' && 'unreadable' in standing) {
      // Unchecked is refused: a guest must not get in because Slack was slow.
      if (!policy.access.allowGuests) {
        return standing.unreadable === 'late' ? ACCESS_TOO_SLOW : COULD_NOT_CHECK(standing.unreadable);
      }
    } else if (standing !== 'unknown') {
      guest = standing.guest;
      homeTeamId = standing.teamId;
      deactivated = standing.deactivated;
      enterpriseId = standing.enterpriseId;
    }
  }
  const check = mayUse(
    policy,
    { teamId: botTeamId, enterpriseId: deps.botEnterpriseId },
    { teamId: caller.teamId, guest, homeTeamId, deactivated, enterpriseId },
  );
  if (check.allowed) return undefined;
  deps.log.info(
    { userId: caller.userId, teamId: caller.teamId, kind: caller.kind },
    'refused: guest, other workspace or deactivated',
  );
  // The policy kept a person out: the audit trail says so, as for a role refusal. Not awaited, so a
  // slow Redis never delays the answer; a failed write is logged.
  void deps.guardrails.audit
    .append({
      event: 'request',
      actor: caller.userId,
      operation: 'access',
      parameters: { door: caller.kind, why: check.reason, ...(caller.teamId ? { team: caller.teamId } : {}) },
      outcome: 'refused',
      ...(caller.channelId ? { channel: caller.channelId } : {}),
    })
    .catch((err: unknown) => deps.log.warn({ err }, 'could not append a refusal to the audit trail'));
  return check.message;
}

export function accessGate(deps: SlackDeps, botTeamId: string | undefined): Middleware<AnyMiddlewareArgs> {
  return async (raw) => {
    const args = raw as Args;
    const caller = callerOf(args.body as unknown as Record<string, unknown>);
    if (!caller) return args.next();
    const refusal = await callerRefusal(deps, botTeamId, caller, false, requestDeadline(args.context));
    if (refusal !== undefined) return refuse(deps, args, caller, refusal);
    return args.next();
  };
}
