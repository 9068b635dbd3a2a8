import type { App, SlashCommand } from '@slack/bolt';
import type { KnownBlock } from '@slack/types';
import { answerDirect } from '../../commands/answers.js';
import { orphanWarning, unavailableIn } from '../../commands/availability.js';
import { formatParseError } from '../../commands/help.js';
import type { DirectContext } from '../../commands/kit/direct.js';
import { sections } from '../../commands/kit/direct.js';
import { parseCommand } from '../../commands/parse-command.js';
import { deliveryOf } from '../../commands/registry.js';
import type { JobContext } from '../../jobs/job-data.js';
import { groupsInPolicy, mayApprove } from '../../policy/decide.js';
import { acceptDirect, acceptRequest, checkAccess } from '../../requests/accept-request.js';
import { SLASH_COMMAND } from '../app-manifest.js';
import type { SlackDeps } from '../slack-deps.js';
import { firstDelivery, REPLAYED_COMMAND } from '../trigger-replays.js';

interface Reply {
  readonly text?: string;
  readonly blocks?: KnownBlock[];
  readonly response_type?: 'ephemeral' | 'in_channel';
}

export const REDIS_DOWN =
  'gpuops cannot reach its queue right now, so nothing was started. Please try again in a minute.';

/** `/gpu …`: verify (Bolt), parse, check, acknowledge, and enqueue — never a call to the cloud here. */
export function registerGpuCommand(app: App, deps: SlackDeps): void {
  app.command(SLASH_COMMAND, async ({ command, ack }) => {
    const reply = await answer(command, deps).catch((err: unknown): Reply => {
      deps.log.error({ err }, 'could not accept /gpu');
      return { response_type: 'ephemeral', text: REDIS_DOWN };
    });
    await ack(reply.text || reply.blocks ? { response_type: 'ephemeral', ...reply } : undefined);
  });
}

async function answer(slash: SlashCommand, deps: SlackDeps): Promise<Reply> {
  const parsed = parseCommand(slash.text);
  if (!parsed.ok) {
    const text = formatParseError(parsed.error);
    return { text, blocks: sections([text]) };
  }
  const command = parsed.command;
  const missing = unavailableIn(command, deps.shape, deps.routes);
  if (missing) return { text: missing };
  deps.onCommand?.(command.kind);

  const binding = await deps.store.projectOf(slash.channel_id);
  const projectId = binding?.projectId ?? deps.defaultProjectId;
  const ctx: JobContext = {
    teamId: slash.team_id,
    channelId: slash.channel_id,
    userId: slash.user_id,
    userName: slash.user_name,
    ...(projectId ? { projectId } : {}),
    ...(slash.response_url ? { responseUrl: slash.response_url } : {}),
    requestedAt: Date.now(),
  };
  switch (deliveryOf(command.kind)) {
    case 'direct': {
      // Answered here, but still checked (`/gpu audit` is for admins) and on the audit trail.
      const refused = await acceptDirect(deps, command, ctx);
      if (refused) return { text: refused.message };
      return answerDirect(command, directContext(slash, deps));
    }
    default:
      break;
  }
  if ('modal' in command && command.modal) {
    // No form for someone who may not submit it.
    const refused = await checkAccess(deps, command.kind, ctx);
    if (refused) return { text: refused.message };
    if (deps.openModal) return (await deps.openModal(command, slash)) ?? {};
    return {
      text: 'That form is not available in this version; give the arguments instead (see /gpu help).',
    };
  }
  // A replayed request (valid signature, within five minutes) starts nothing new.
  if (!(await firstDelivery(deps.store, slash.trigger_id))) return { text: REPLAYED_COMMAND };
  const result = await acceptRequest(deps, command, ctx);
  if (result.status === 'refused' || result.status === 'rejected') return { text: result.message };
  // Said before it runs: what the cloud will not let anyone list or delete afterwards.
  const warning = orphanWarning(command.kind, deps.routes);
  const withWarning = (text: string | undefined) =>
    warning ? { text: text ? `${warning}\n${text}` : warning } : text ? { text } : {};
  if (result.status === 'pending-approval') return withWarning(result.notice);
  if (result.status === 'duplicate') {
    return { text: `Already on it: that same request is job ${result.jobId}.` };
  }
  switch (deliveryOf(command.kind)) {
    case 'ephemeral':
      return withWarning(`:mag: Looking that up… (job ${result.jobId})`);
    case 'dm':
      return withWarning(':envelope: I will send it to you in a direct message.');
    default:
      // The channel message is the answer; say nothing more unless it could not be posted.
      return withWarning(
        result.message ? undefined : `:hourglass_flowing_sand: Queued as job ${result.jobId}.`,
      );
  }
}

/** What a direct answer needs, from the listener's deps and the policy. */
function directContext(slash: SlashCommand, deps: SlackDeps): DirectContext {
  const { policy, approvals, audit } = deps.guardrails;
  return {
    channelId: slash.channel_id,
    userId: slash.user_id,
    store: deps.store,
    shape: deps.shape,
    routes: deps.routes,
    defaultProjectId: deps.defaultProjectId,
    watch: {
      pollEverySeconds: policy.watch.pollEverySeconds,
      capacityEverySeconds: policy.watch.capacityEverySeconds,
      idleThresholdPercent: policy.idle.thresholdPercent,
      idleWindowSeconds: policy.idle.windowSeconds,
      digest: policy.digest,
    },
    audit,
    async approvalsFor(userId) {
      const [groups, pending] = await Promise.all([
        deps.ports.groupsOf(userId, groupsInPolicy(policy)),
        approvals.listPending({ limit: 200 }),
      ]);
      const mine = pending.filter(
        (r) =>
          mayApprove({
            policy,
            approverId: userId,
            approverGroups: groups,
            requesterId: r.requester,
            kind: r.kind,
            channelId: r.approvalChannel,
          }).allowed,
      );
      return { mine, own: pending.filter((r) => r.requester === userId) };
    },
  };
}
