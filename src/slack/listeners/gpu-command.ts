import type { App, SlashCommand } from '@slack/bolt';
import type { KnownBlock } from '@slack/types';
import { unavailableIn } from '../../command/availability.js';
import type { GpuCommand } from '../../command/command-schema.js';
import { formatParseError, helpText } from '../../command/help.js';
import { parseCommand } from '../../command/parse-command.js';
import { deliveryOf } from '../../jobs/kinds.js';
import { escapeText } from '../../render/job-message.js';
import { acceptRequest } from '../accept-request.js';
import { SLASH_COMMAND } from '../app-manifest.js';
import type { SlackDeps } from '../slack-deps.js';

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

  switch (deliveryOf(command.kind)) {
    case 'direct':
      return answerDirectly(command, slash, deps);
    default:
      break;
  }
  if ('modal' in command && command.modal) {
    if (deps.openModal) return (await deps.openModal(command, slash)) ?? {};
    return {
      text: 'That form is not available in this version; give the arguments instead (see /gpu help).',
    };
  }
  const binding = await deps.store.projectOf(slash.channel_id);
  const projectId = binding?.projectId ?? deps.defaultProjectId;
  const result = await acceptRequest(deps, command, {
    teamId: slash.team_id,
    channelId: slash.channel_id,
    userId: slash.user_id,
    userName: slash.user_name,
    ...(projectId ? { projectId } : {}),
    ...(slash.response_url ? { responseUrl: slash.response_url } : {}),
    requestedAt: Date.now(),
  });
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
    default:
      return { text: `\`/gpu ${command.kind.replaceAll('.', ' ')}\` comes in a later version of gpuops.` };
  }
}
