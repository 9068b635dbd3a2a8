import type { App, BlockAction, ButtonAction } from '@slack/bolt';
import { answerDirect } from '../../commands/answers.js';
import { unavailableIn } from '../../commands/availability.js';
import { formatParseError } from '../../commands/help.js';
import {
  HOME_ACTION_PREFIX,
  type HomeButtonValue,
  type HomeRun,
  isHomeRun,
  readHomeButton,
} from '../../commands/home/home-buttons.js';
import { withDeadline } from '../../commands/kit/with-deadline.js';
import { parseCommand } from '../../commands/parse-command.js';
import { deliveryOf } from '../../commands/registry.js';
import { createHomePublisher } from '../../home/create-home-publisher.js';
import type { HomePublisher } from '../../home/home-deps.js';
import type { JobContext } from '../../jobs/job-data.js';
import { MaybeQueuedError } from '../../jobs/replicated.js';
import { acceptDirect, acceptRequest } from '../../requests/accept-request.js';
import { markHomeOpened } from '../../store/home-state.js';
import type { SlackDeps } from '../slack-deps.js';
import { directContext, MAYBE_QUEUED, REDIS_DOWN } from './gpu-command.js';

// The Home tab (docs/home.md): published when someone opens it, and again after each press of its
// buttons with what became of the press on top. Start, Stop, Metrics and Remove run the `/gpu`
// command the button carries for the channel it names (the machine's, the entry's: its messages go
// there), through the same door as the slash command: rate limits, roles, approvals, the queue, the
// audit trail. Nothing is clicked in that channel, so a role granted to it does not count: the
// person's own roles decide. Approve, Deny and the form buttons are the messages' own
// (approval-actions.ts, form-actions.ts).

type Press = BlockAction<ButtonAction>;

/** The Home publisher of these deps: the composition root's, else one drawing the chart if it has fonts. */
export function homePublisherOf(deps: SlackDeps): HomePublisher {
  return (
    deps.home ??
    createHomePublisher({
      store: deps.store,
      client: deps.client,
      log: deps.log,
      policy: deps.guardrails.policy,
      approvals: deps.guardrails.approvals,
      leases: deps.guardrails.leases,
      groupsOf: (userId, groups) => deps.ports.groupsOf(userId, groups),
      shape: deps.shape,
      routes: deps.routes,
      defaultProjectId: deps.defaultProjectId,
      fonts: deps.homeFonts,
      budgets: deps.homeBudgets,
      readMachines: deps.homeMachines,
      publishLater: deps.homeLater,
    })
  );
}

/** Whether a press came from someone's Home tab (it then has no channel and no response_url). */
export function fromHome(body: { readonly view?: { readonly type?: string } | undefined }): boolean {
  return body.view?.type === 'home';
}

/** Re-publishes the presser's Home with what became of the press; never throws. */
export async function answerOnHome(deps: SlackDeps, userId: string, notice: string): Promise<void> {
  await homePublisherOf(deps)
    .publish(userId, { notice })
    .catch(async (err: unknown) => {
      deps.log.warn({ err }, 'could not publish a Home tab');
      // The page could not be gathered (Redis gone): the answer alone, rather than no answer at all.
      await deps.client.views
        .publish({
          user_id: userId,
          view: { type: 'home', blocks: [{ type: 'section', text: { type: 'mrkdwn', text: notice } }] },
        })
        .catch(() => {});
    });
}

/** Runs the button's command as typed in its channel; what to tell the presser. */
async function runFromHome(
  deps: SlackDeps,
  body: Press,
  run: HomeRun,
  value: HomeButtonValue,
): Promise<string> {
  const parsed = parseCommand(value.t);
  if (!parsed.ok) return formatParseError(parsed.error);
  const command = parsed.command;
  if (!isHomeRun(run, command)) return 'That button is not one gpuops made; nothing was done.';
  const missing = unavailableIn(command, deps.shape, deps.routes);
  if (missing) return missing;
  const binding = await withDeadline(deps.store.projectOf(value.c), 1_500, 'Redis');
  const projectId = value.p ?? binding?.projectId ?? deps.defaultProjectId;
  // No `madeIn`: the channel comes from the button, not from where the press was made.
  const ctx: JobContext = {
    teamId: body.team?.id ?? body.user.team_id ?? 'unknown',
    channelId: value.c,
    userId: body.user.id,
    ...(body.user.name ? { userName: body.user.name } : {}),
    ...(projectId ? { projectId } : {}),
    requestedAt: Date.now(),
  };
  if (deliveryOf(command.kind) === 'direct') {
    const refused = await acceptDirect(deps, command, ctx);
    if (refused) return refused.message;
    return (await answerDirect(command, directContext({ channelId: value.c, userId: body.user.id }, deps)))
      .text;
  }
  const result = await acceptRequest(deps, command, ctx);
  switch (result.status) {
    case 'refused':
    case 'rejected':
      return result.message;
    case 'pending-approval':
      return result.notice;
    case 'duplicate':
      return `Already on it: \`/gpu ${value.t}\` is job ${result.jobId}.`;
    case 'queued':
      return `:hourglass_flowing_sand: \`/gpu ${value.t}\` is queued as job ${result.jobId}; its progress is in <#${value.c}>.`;
  }
}

export function registerHomeActions(app: App, deps: SlackDeps): void {
  app.event('app_home_opened', async ({ event }) => {
    // The same event comes for the Messages tab: only the Home tab is ours to draw.
    if (event.tab !== 'home') return;
    try {
      await markHomeOpened(deps.store, event.user, event.channel);
      await homePublisherOf(deps).publish(event.user);
    } catch (err) {
      deps.log.warn({ err }, 'could not publish a Home tab');
    }
  });

  app.action<Press>(
    new RegExp(`^${HOME_ACTION_PREFIX.replaceAll('.', '\\.')}`),
    async ({ ack, body, action }) => {
      await ack();
      const press = readHomeButton(action.action_id, action.value);
      if (!press) {
        const stale =
          'That button is from an older version of this page, so nothing was done; here is the page as it is now.';
        await answerOnHome(deps, body.user.id, stale);
        return;
      }
      const notice = await runFromHome(deps, body, press.run, press.value).catch((err: unknown) => {
        deps.log.error({ err }, 'could not run a Home tab button');
        return err instanceof MaybeQueuedError ? MAYBE_QUEUED : REDIS_DOWN;
      });
      await answerOnHome(deps, body.user.id, notice);
    },
  );
}
