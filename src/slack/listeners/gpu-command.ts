import type { App, SlashCommand } from '@slack/bolt';
import type { KnownBlock } from '@slack/types';
import { auditList, pendingList } from '../../commands/approvals/render.js';
import { unavailableIn } from '../../commands/availability.js';
import { formatParseError, helpText } from '../../commands/help.js';
import { parseCommand } from '../../commands/parse-command.js';
import type { GpuCommand } from '../../commands/registry.js';
import { deliveryOf } from '../../commands/registry.js';
import type { JobContext } from '../../jobs/job-data.js';
import { groupsInPolicy, mayApprove } from '../../policy/decide.js';
import { escapeText } from '../../render/job-message.js';
import { acceptDirect, acceptRequest, checkAccess } from '../accept-request.js';
import { SLASH_COMMAND } from '../app-manifest.js';
import { groupsOf } from '../group-membership.js';
import type { SlackDeps } from '../slack-deps.js';
import { answerWaitlist, answerWatch } from './watch-command.js';

interface Reply {
  readonly text?: string;
  readonly blocks?: KnownBlock[];
  readonly response_type?: 'ephemeral' | 'in_channel';
}

const sections = (texts: readonly string[]): KnownBlock[] =>
  texts.map((text) => ({ type: 'section', text: { type: 'mrkdwn', text } }));

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
      return answerDirectly(command, slash, deps);
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
  const result = await acceptRequest(deps, command, ctx);
  if (result.status === 'refused') return { text: result.message };
  if (result.status === 'pending-approval') return { text: result.notice };
  if (result.status === 'duplicate') {
    return { text: `Already on it: that same request is job ${result.jobId}.` };
  }
  switch (deliveryOf(command.kind)) {
    case 'ephemeral':
      return { text: `:mag: Looking that up… (job ${result.jobId})` };
    case 'dm':
      return { text: ':envelope: I will send it to you in a direct message.' };
    default:
      // The channel message is the answer; say nothing more unless it could not be posted.
      return result.message ? {} : { text: `:hourglass_flowing_sand: Queued as job ${result.jobId}.` };
  }
}

async function answerDirectly(command: GpuCommand, slash: SlashCommand, deps: SlackDeps): Promise<Reply> {
  switch (command.kind) {
    case 'help': {
      const texts = helpText(command.topic, { shape: deps.shape, routes: deps.routes });
      return { text: texts[0] ?? 'gpuops help', blocks: sections(texts.slice(0, 50)) };
    }
    case 'project': {
      const binding = await deps.store.projectOf(slash.channel_id);
      if (binding) {
        const name = binding.name ? `${escapeText(binding.name)} ` : '';
        return {
          text: `This channel works in project ${name}\`${binding.projectId}\` (set by <@${binding.boundBy}>).`,
        };
      }
      if (deps.defaultProjectId) {
        return {
          text: `This channel uses the default project \`${deps.defaultProjectId}\`. Change it with \`/gpu project use <name|id>\`.`,
        };
      }
      return { text: 'This channel has no project yet: run `/gpu project use <name|id>`.' };
    }
    case 'jobs': {
      const jobs = await deps.store.recentJobs(slash.channel_id, 15);
      if (jobs.length === 0) return { text: 'No jobs in this channel yet.' };
      const lines = jobs.map(
        (j) =>
          `• \`${escapeText(j.summary)}\` · *${j.state}* · <@${j.userId}> · <!date^${Math.floor(j.createdAt / 1000)}^{date_short_pretty} {time}|${new Date(j.createdAt).toISOString()}>${j.detail ? `\n   ${escapeText(j.detail).slice(0, 200)}` : ''}`,
      );
      const text = `*Recent jobs in this channel*\n${lines.join('\n')}`;
      return { text: `Recent jobs: ${jobs.length}`, blocks: sections([text.slice(0, 2900)]) };
    }
    case 'approvals':
      return answerApprovals(slash, deps);
    case 'watch':
      return answerWatch(command, slash, deps);
    case 'waitlist':
    case 'waitlist.add':
    case 'waitlist.rm':
      return answerWaitlist(command, slash, deps);
    case 'audit': {
      const audit = deps.guardrails?.audit;
      if (!audit) return { text: 'The audit trail is off in this gpuops (no guardrails configured).' };
      return auditList(await audit.latest(command.limit), command.limit);
    }
    default:
      return { text: `\`/gpu ${command.kind.replaceAll('.', ' ')}\` comes in a later version of gpuops.` };
  }
}

/** `/gpu approvals`: what this person may decide, with the buttons, and how many of theirs wait. */
async function answerApprovals(slash: SlashCommand, deps: SlackDeps): Promise<Reply> {
  const guardrails = deps.guardrails;
  if (!guardrails) return { text: 'Approvals are off in this gpuops (no guardrails configured).' };
  const { policy, approvals } = guardrails;
  const userId = slash.user_id;
  const [groups, pending] = await Promise.all([
    groupsOf(deps, userId, groupsInPolicy(policy)),
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
  const own = pending.filter((r) => r.requester === userId).length;
  return pendingList(mine, { ownWaiting: own });
}
