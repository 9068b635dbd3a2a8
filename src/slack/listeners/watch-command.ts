import type { SlashCommand } from '@slack/bolt';
import type { KnownBlock } from '@slack/types';
import type { CommandOf } from '../../commands/registry.js';
import { waitlistBlocks } from '../../commands/waitlist/render.js';
import { DEFAULT_POLICY, type Policy } from '../../policy/policy-schema.js';
import { formatDuration } from '../../render/format-duration.js';
import { escapeText } from '../../render/job-message.js';
import { readCatalog } from '../../store/catalog-cache.js';
import { createWaitlist, MAX_WAITLIST_PER_CHANNEL } from '../../store/waitlist.js';
import { type ChannelWatch, createWatchSubscriptions } from '../../store/watch-subscriptions.js';
import { withDeadline } from '../enqueue-request.js';
import type { SlackDeps } from '../slack-deps.js';

// `/gpu watch [on|off]` and `/gpu waitlist …`: answered by the listener from Redis alone (the
// watchers' jobs do the looking). docs/watch.md.

export interface DirectReply {
  readonly text: string;
  readonly blocks?: KnownBlock[];
}

const REDIS_MS = 1_500;

const policyOf = (deps: SlackDeps): Policy => deps.guardrails?.policy ?? DEFAULT_POLICY;

function projectLabel(w: Pick<ChannelWatch, 'projectId' | 'projectName'>): string {
  return w.projectName ? `*${escapeText(w.projectName)}* (\`${w.projectId}\`)` : `\`${w.projectId}\``;
}

/** What watching posts, in the policy's terms. */
function watchingSays(policy: Policy): string {
  const digest = policy.digest.enabled
    ? `a daily digest (\`${policy.digest.cron}\`, ${escapeText(policy.digest.tz)})`
    : 'no daily digest (turned off in the policy)';
  return (
    `Changes to its instances (state, IP), Kubernetes and Slurm clusters and node pools show up here within about ${formatDuration(policy.watch.pollEverySeconds)}: ` +
    'one message per resource, edited in place, with a thread reply for each change. ' +
    `GPUs idle below ${policy.idle.thresholdPercent}% for ${formatDuration(policy.idle.windowSeconds)} are reported here and to their owner, and ${digest} comes here.`
  );
}

async function currentProject(
  deps: SlackDeps,
  channelId: string,
): Promise<{ projectId: string; projectName?: string } | undefined> {
  const binding = await withDeadline(deps.store.projectOf(channelId), REDIS_MS, 'Redis');
  if (binding)
    return { projectId: binding.projectId, ...(binding.name ? { projectName: binding.name } : {}) };
  return deps.defaultProjectId ? { projectId: deps.defaultProjectId } : undefined;
}

export async function answerWatch(
  command: CommandOf<'watch'>,
  slash: SlashCommand,
  deps: SlackDeps,
): Promise<DirectReply> {
  const subscriptions = createWatchSubscriptions(deps.store);
  const channelId = slash.channel_id;
  const current = await withDeadline(subscriptions.watchOf(channelId), REDIS_MS, 'Redis');
  const policy = policyOf(deps);
  if (command.state === undefined) {
    if (!current) {
      return { text: 'This channel watches nothing. `/gpu watch on` follows the project it works in.' };
    }
    const project = await currentProject(deps, channelId);
    const moved =
      project && project.projectId !== current.projectId
        ? ` This channel now works in \`${project.projectId}\`: \`/gpu watch on\` follows that one instead.`
        : '';
    return {
      text: `This channel watches project ${projectLabel(current)} since <!date^${Math.floor(current.since / 1000)}^{date_short_pretty}|${new Date(current.since).toISOString()}> (turned on by <@${current.by}>). ${watchingSays(policy)} \`/gpu watch off\` stops it.${moved}`,
    };
  }
  if (command.state === 'off') {
    const previous = await withDeadline(subscriptions.unwatch(channelId), REDIS_MS, 'Redis');
    return {
      text: previous
        ? `This channel stopped watching project ${projectLabel(previous)}. Messages already posted stay as they are.`
        : 'This channel was not watching anything.',
    };
  }
  const project = await currentProject(deps, channelId);
  if (!project) {
    return {
      text: 'This channel has no project yet: run `/gpu project use <name|id>` first, then `/gpu watch on`.',
    };
  }
  if (current && current.projectId === project.projectId) {
    return { text: `This channel already watches project ${projectLabel(current)}. ${watchingSays(policy)}` };
  }
  await withDeadline(
    subscriptions.watch({
      channelId,
      projectId: project.projectId,
      ...(project.projectName ? { projectName: project.projectName } : {}),
      by: slash.user_id,
      since: Date.now(),
    }),
    REDIS_MS,
    'Redis',
  );
  const was = current ? ` (instead of ${projectLabel(current)})` : '';
  return {
    text:
      `:eyes: This channel now watches project ${projectLabel(project)}${was}. ${watchingSays(policy)} ` +
      'The first look only records how things are, so nothing is posted until something changes. `/gpu watch off` stops it.',
  };
}

export async function answerWaitlist(
  command: CommandOf<'waitlist'> | CommandOf<'waitlist.add'> | CommandOf<'waitlist.rm'>,
  slash: SlashCommand,
  deps: SlackDeps,
): Promise<DirectReply> {
  const waitlist = createWaitlist(deps.store);
  const channelId = slash.channel_id;
  switch (command.kind) {
    case 'waitlist':
      return waitlistBlocks(await withDeadline(waitlist.list(channelId), REDIS_MS, 'Redis'));
    case 'waitlist.rm': {
      const removed = await withDeadline(waitlist.remove(channelId, command.id), REDIS_MS, 'Redis');
      return {
        text: removed
          ? `Removed \`${removed.id}\` (${escapeText(removed.type)}) from this channel's waitlist.`
          : `This channel's waitlist has no entry \`${escapeText(command.id)}\`: see \`/gpu waitlist\`.`,
      };
    }
    case 'waitlist.add': {
      const project = await currentProject(deps, channelId);
      if (!project) {
        return { text: 'This channel has no project yet: run `/gpu project use <name|id>` first.' };
      }
      const existing = await withDeadline(waitlist.list(channelId), REDIS_MS, 'Redis');
      const same = existing.find((e) => e.type === command.type && e.count === command.count);
      if (same) {
        return { text: `This channel already waits for ${escapeText(command.type)} (\`${same.id}\`).` };
      }
      if (existing.length >= MAX_WAITLIST_PER_CHANNEL) {
        return {
          text: `This channel already waits for ${existing.length} types, the most it may: remove one with \`/gpu waitlist rm <id>\` first.`,
        };
      }
      const entry = await withDeadline(
        waitlist.add({
          channelId,
          projectId: project.projectId,
          type: command.type,
          count: command.count,
          by: slash.user_id,
          createdAt: Date.now(),
        }),
        REDIS_MS,
        'Redis',
      );
      const cached = await withDeadline(readCatalog(deps.store, project.projectId), REDIS_MS, 'Redis').catch(
        () => undefined,
      );
      const known = cached?.catalog.instanceTypes.some((t) => t.name === command.type);
      const unseen =
        cached && !known
          ? ` gpuops has not seen the type ${escapeText(command.type)} in this project's capacity listing yet: check its spelling with \`/gpu capacity\`.`
          : '';
      const machines = command.count === 1 ? 'a machine' : `${command.count} machines`;
      return {
        text: `:hourglass: Added \`${entry.id}\`: this channel is told once when the cloud lists capacity for ${machines} of *${escapeText(command.type)}* (checked every ${formatDuration(policyOf(deps).watch.capacityEverySeconds)}).${unseen}`,
      };
    }
  }
}
