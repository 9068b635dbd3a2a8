import type { App, BlockAction, ButtonAction, RespondFn } from '@slack/bolt';
import { parseCommand } from '../../commands/parse-command.js';
import { deliveryOf } from '../../commands/registry.js';
import type { JobContext } from '../../jobs/job-data.js';
import { PAGE_ACTIONS } from '../../render/instances.js';
import { acceptRequest } from '../../requests/accept-request.js';
import { answerPress } from '../response-url.js';
import type { SlackDeps } from '../slack-deps.js';
import { clickChannel } from './approval-actions.js';
import { REDIS_DOWN } from './gpu-command.js';

// Previous and Next under a paged list. A press runs the list's read again for that page, as the
// presser, through acceptRequest (same roles, same audit trail as typing `/gpu ls --page 2`); the
// job answers on the press's response_url, replacing the list in place, ephemeral or not.

type Press = BlockAction<ButtonAction>;

async function tell(deps: SlackDeps, body: Press, respond: RespondFn, text: string): Promise<void> {
  await answerPress(
    deps,
    { respond, userId: body.user.id, channelId: clickChannel(body) },
    text,
    'could not answer a page button',
  );
}

async function press(deps: SlackDeps, body: Press, value: string, respond: RespondFn): Promise<void> {
  const channelId = clickChannel(body);
  const parsed = parseCommand(value);
  // Only a list's own buttons carry a list command; anything else is not ours to run.
  if (!channelId || !body.response_url || !parsed.ok || deliveryOf(parsed.command.kind) !== 'ephemeral') {
    return;
  }
  const binding = await deps.store.projectOf(channelId);
  const projectId = binding?.projectId ?? deps.defaultProjectId;
  const ctx: JobContext = {
    teamId: body.team?.id ?? body.user.team_id ?? 'unknown',
    channelId,
    // Pressed under a list in this channel: its grants count, as for a command typed there.
    madeIn: channelId,
    userId: body.user.id,
    ...(body.user.name ? { userName: body.user.name } : {}),
    ...(projectId ? { projectId } : {}),
    responseUrl: body.response_url,
    requestedAt: Date.now(),
  };
  deps.onCommand?.(parsed.command.kind);
  const result = await acceptRequest(deps, parsed.command, ctx);
  if (result.status === 'refused' || result.status === 'rejected')
    await tell(deps, body, respond, result.message);
}

export function registerPageActions(app: App, deps: SlackDeps): void {
  for (const action of Object.values(PAGE_ACTIONS)) {
    app.action<Press>(action, async ({ ack, body, action: button, respond }) => {
      await ack();
      await press(deps, body, button.value ?? '', respond).catch(async (err: unknown) => {
        deps.log.error({ err }, 'could not turn the page of a list');
        await tell(deps, body, respond, REDIS_DOWN);
      });
    });
  }
}
