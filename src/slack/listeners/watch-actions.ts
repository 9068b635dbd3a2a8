import type { App, BlockAction, ButtonAction } from '@slack/bolt';
import { withDeadline } from '../../commands/kit/with-deadline.js';
import { readWaitlistButtonValue, WAITLIST_CREATE_ACTION } from '../../commands/waitlist/render.js';
import type { JobContext } from '../../jobs/job-data.js';
import {
  answeredAlertBlocks,
  IDLE_ACTIONS,
  type IdleButtonValue,
  KEEP_SECONDS,
  readIdleButtonValue,
  SNOOZE_SECONDS,
} from '../../render/idle-alert.js';
import { slackDate } from '../../render/slack-date.js';
import { acceptRequest, checkAccess } from '../../requests/accept-request.js';
import { createIdleState } from '../../store/idle-state.js';
import { openForm } from '../open-form.js';
import { tellPrivately } from '../response-url.js';
import type { SlackDeps } from '../slack-deps.js';
import { REDIS_DOWN } from './gpu-command.js';

// The buttons the watchers post: Stop, Keep for 2 hours and Snooze for a day on an idle-GPU alert,
// and Create on a waitlist notice. Stop is a `stop` request through acceptRequest, so it meets the
// same roles and approvals as `/gpu stop`; Keep and Snooze record a suppression; Create opens the
// create form with the type filled in.

type Press = BlockAction<ButtonAction>;

const REDIS_MS = 1_500;
/** How long a Stop press keeps the policy from stopping the machine on its own. */
const ANSWERED_SECONDS = 24 * 3600;

function where(body: Press): { channelId: string | undefined; ts: string | undefined } {
  const container = body.container as { channel_id?: string; message_ts?: string };
  return {
    channelId: body.channel?.id ?? container.channel_id,
    ts: body.message?.ts ?? container.message_ts,
  };
}

function contextOf(body: Press, channelId: string, value: IdleButtonValue): JobContext {
  return {
    teamId: body.team?.id ?? body.user.team_id ?? 'unknown',
    channelId,
    userId: body.user.id,
    ...(body.user.name ? { userName: body.user.name } : {}),
    projectId: value.p,
    ...(body.response_url ? { responseUrl: body.response_url } : {}),
    requestedAt: Date.now(),
  };
}

/** Replaces the alert's buttons with who answered what, where the button was pressed. */
async function markAlert(deps: SlackDeps, body: Press, note: string): Promise<void> {
  const { channelId, ts } = where(body);
  if (!channelId || !ts) return;
  const blocks = answeredAlertBlocks(body.message?.blocks ?? [], note);
  const text = String(body.message?.text ?? 'Idle GPU alert');
  await deps.client.chat
    .update({ channel: channelId, ts, text, blocks })
    .catch((err: unknown) => deps.log.warn({ err }, 'could not update an idle alert'));
}

/** Answers the person who pressed, privately: the press's response_url, else an ephemeral. */
function tellPresser(deps: SlackDeps, body: Press, text: string): Promise<void> {
  const target = { userId: body.user.id, channelId: where(body).channelId, responseUrl: body.response_url };
  return tellPrivately(deps, target, text, 'could not answer a button');
}

async function pressStop(deps: SlackDeps, body: Press, value: IdleButtonValue): Promise<void> {
  const { channelId } = where(body);
  if (!channelId) return;
  const result = await acceptRequest(
    deps,
    { kind: 'stop', instance: value.i },
    contextOf(body, channelId, value),
  );
  const who = `<@${body.user.id}>`;
  switch (result.status) {
    case 'refused':
    case 'rejected':
      await tellPresser(deps, body, result.message);
      return;
    case 'pending-approval':
      await markAlert(deps, body, `:hourglass: ${who} asked to stop it; the request waits for an approver.`);
      await tellPresser(deps, body, result.notice);
      break;
    case 'duplicate':
      await markAlert(
        deps,
        body,
        `:octagonal_sign: ${who} asked to stop it (already on it: job ${result.jobId}).`,
      );
      break;
    case 'queued':
      await markAlert(deps, body, `:octagonal_sign: ${who} asked to stop it (job ${result.jobId}).`);
      break;
  }
  await withDeadline(
    createIdleState(deps.store).markAnswered(value.i, body.user.id, ANSWERED_SECONDS),
    REDIS_MS,
    'Redis',
  );
}

async function pressQuiet(
  deps: SlackDeps,
  body: Press,
  value: IdleButtonValue,
  reason: 'keep' | 'snooze',
): Promise<void> {
  const { channelId } = where(body);
  if (!channelId) return;
  // Keeping a machine past the policy's automatic stop is an operator's call, like starting one.
  const refused = await checkAccess(deps, 'watch', { userId: body.user.id, channelId });
  if (refused) {
    await tellPresser(deps, body, refused.message);
    return;
  }
  const seconds = reason === 'keep' ? KEEP_SECONDS : SNOOZE_SECONDS;
  const until = Date.now() + seconds * 1000;
  const idle = createIdleState(deps.store);
  await withDeadline(idle.suppress(value.i, { until, by: body.user.id, reason }), REDIS_MS, 'Redis');
  // A new idle period after the quiet time is alerted afresh.
  await withDeadline(idle.end(value.p, [value.i]), REDIS_MS, 'Redis');
  const stamp = slackDate(until);
  const what = reason === 'keep' ? 'keeps it for 2 hours' : 'snoozed this alert for a day';
  await markAlert(
    deps,
    body,
    `:ok_hand: <@${body.user.id}> ${what}: no idle alert or automatic stop until ${stamp}.`,
  );
}

export function registerWatchActions(app: App, deps: SlackDeps): void {
  const onIdle = (action: string, run: (body: Press, value: IdleButtonValue) => Promise<void>) =>
    app.action<Press>(action, async ({ ack, body, action: button }) => {
      await ack();
      const value = readIdleButtonValue(button.value);
      if (!value) return;
      await run(body, value).catch(async (err: unknown) => {
        deps.log.error({ err, action }, 'could not handle an idle alert button');
        await tellPresser(deps, body, REDIS_DOWN);
      });
    });
  onIdle(IDLE_ACTIONS.stop, (body, value) => pressStop(deps, body, value));
  onIdle(IDLE_ACTIONS.keep, (body, value) => pressQuiet(deps, body, value, 'keep'));
  onIdle(IDLE_ACTIONS.snooze, (body, value) => pressQuiet(deps, body, value, 'snooze'));

  app.action<Press>(WAITLIST_CREATE_ACTION, async ({ ack, body, action }) => {
    await ack();
    const value = readWaitlistButtonValue(action.value);
    const { channelId } = where(body);
    if (!value || !channelId) return;
    try {
      // No form for someone who may not submit it; but the form opens before the trigger id expires,
      // whatever the check takes (the submission is checked again).
      const access = checkAccess(deps, 'create', { userId: body.user.id, channelId });
      const result = await openForm(
        deps,
        {
          form: 'create',
          prefill: { type: value.t },
          triggerId: body.trigger_id,
          channelId,
          userId: body.user.id,
          responseUrl: body.response_url,
        },
        access,
      );
      if (!result.ok) await tellPresser(deps, body, result.text);
    } catch (err) {
      deps.log.error({ err }, 'could not open the create form from the waitlist');
      await tellPresser(deps, body, REDIS_DOWN);
    }
  });
}
