import type { App, SlackCommandMiddlewareArgs, SlashCommand } from '@slack/bolt';
import type { KnownBlock } from '@slack/types';
import { answerDirect } from '../../commands/answers.js';
import { orphanWarning, unavailableIn } from '../../commands/availability.js';
import { formatParseError } from '../../commands/help.js';
import type { DirectContext } from '../../commands/kit/direct.js';
import { sections } from '../../commands/kit/direct.js';
import { parseCommand } from '../../commands/parse-command.js';
import { deliveryOf } from '../../commands/registry.js';
import type { JobContext } from '../../jobs/job-data.js';
import { MaybeQueuedError } from '../../jobs/replicated.js';
import { approvableBy, groupsInPolicy } from '../../policy/decide.js';
import { acceptDirect, acceptRequest, checkAccess } from '../../requests/accept-request.js';
import { rateLimitedAnswer } from '../../store/rate-limiter.js';
import { isRedisFull, REDIS_FULL } from '../../store/redis-full.js';
import { SLASH_COMMAND } from '../app-manifest.js';
import type { SlackDeps } from '../slack-deps.js';
import { REPLAYED_COMMAND, SIGNATURE_WINDOW_SECONDS } from '../trigger-replays.js';

interface Reply {
  readonly text?: string;
  readonly blocks?: KnownBlock[];
  readonly response_type?: 'ephemeral' | 'in_channel';
  /** Slack posts for after the acknowledgement; resolves with what else to tell the requester. */
  readonly followUp?: () => Promise<string | undefined>;
}

export const REDIS_DOWN =
  'gpuops cannot reach its queue right now, so nothing was started. Please try again in a minute.';

/**
 * Redis failed, failed over or was too slow while the request was being stored: it may still run
 * (src/jobs/replicated.ts), so the person is told to look before sending it again.
 */
export const MAYBE_QUEUED =
  'gpuops lost touch with Redis while storing this request, so it may or may not run. Check `/gpu jobs` in a minute before sending it again.';

/**
 * The listener answers within this, whatever Redis does (Slack gives up after 3 s): a request still
 * being stored then gets MAYBE_QUEUED, as it may yet be stored.
 */
const ANSWER_WITHIN_MS = 2_500;

class AnswerTooSlow extends Error {}

/**
 * `/gpu …`: verify (Bolt), parse, check, enqueue, acknowledge — and only then post to Slack (the
 * "Queued" message, an approval card), so a slow or rate-limited Slack cannot make a queued request
 * miss Slack's 3 s acknowledgement. Never a call to the cloud here.
 */
export function registerGpuCommand(app: App, deps: SlackDeps): void {
  // A global middleware, not app.command: Bolt runs the matchers of every listener on every request,
  // and `/gpu` is the request every person sends. Answered here, it skips the other 20 listeners (in
  // a bare Bolt app 20 listeners cost 0.12 ms of CPU a request, more than half the app's own).
  app.use(async (args) => {
    if ((args.body as { command?: unknown }).command !== SLASH_COMMAND) return args.next();
    await answerCommand(args as unknown as SlackCommandMiddlewareArgs, deps);
  });
}

async function answerCommand(
  { command, ack, respond }: SlackCommandMiddlewareArgs,
  deps: SlackDeps,
): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const tooSlow = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new AnswerTooSlow('no answer within 2.5 s')), ANSWER_WITHIN_MS);
  });
  const { followUp, ...reply } = await Promise.race([answer(command, deps), tooSlow])
    .catch((err: unknown): Reply => {
      deps.log.error({ err }, 'could not accept /gpu');
      const maybe = err instanceof MaybeQueuedError || err instanceof AnswerTooSlow;
      const text = maybe ? MAYBE_QUEUED : isRedisFull(err) ? REDIS_FULL : REDIS_DOWN;
      return { response_type: 'ephemeral', text };
    })
    .finally(() => clearTimeout(timer));
  await ack(reply.text || reply.blocks ? { response_type: 'ephemeral', ...reply } : undefined);
  if (!followUp) return;
  const note = await followUp().catch((err: unknown) => {
    deps.log.warn({ err }, 'could not finish posting a request');
    return undefined;
  });
  // Through the response_url: it reaches the requester wherever they typed, bot member or not.
  if (note) {
    await respond({ response_type: 'ephemeral', replace_original: false, text: note }).catch((err: unknown) =>
      deps.log.warn({ err }, 'could not tell the requester what happened'),
    );
  }
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
      return answerDirect(
        command,
        directContext({ channelId: slash.channel_id, userId: slash.user_id }, deps),
      );
    }
    default:
      break;
  }
  if ('modal' in command && command.modal) {
    // No form for someone who may not submit it; but the form opens before Slack's trigger id expires,
    // whatever the check takes (the submission is checked again).
    const access = checkAccess(deps, command.kind, ctx);
    if (deps.openModal) return (await deps.openModal(command, slash, access)) ?? {};
    const refused = await access;
    if (refused) return { text: refused.message };
    return {
      text: 'That form is not available in this version; give the arguments instead (see /gpu help).',
    };
  }
  // One noisy person or channel is slowed to the policy's rate, so the others keep theirs.
  const limited = await deps.guardrails.rateLimiter?.take(slash.user_id, slash.channel_id);
  if (limited && !limited.ok) {
    deps.log.debug({ user: slash.user_id, channel: slash.channel_id, who: limited.who }, 'rate limited');
    return { text: rateLimitedAnswer(limited) };
  }
  // A replayed request (valid signature, within five minutes) starts nothing new: its trigger is
  // claimed with the request itself.
  const result = await acceptRequest(deps, command, ctx, {
    deferPosts: true,
    binding: binding ?? null,
    ...(slash.trigger_id ? { trigger: { id: slash.trigger_id, seconds: SIGNATURE_WINDOW_SECONDS } } : {}),
  });
  if (result.status === 'refused' || result.status === 'rejected') return { text: result.message };
  // Said before it runs: what the cloud will not let anyone list or delete afterwards.
  const warning = orphanWarning(command.kind, deps.routes);
  const followUp = 'followUp' in result && result.followUp ? { followUp: result.followUp } : {};
  const withWarning = (text: string | undefined) => ({
    ...(warning ? { text: text ? `${warning}\n${text}` : warning } : text ? { text } : {}),
    ...followUp,
  });
  if (result.status === 'pending-approval') return withWarning(result.notice);
  if (result.status === 'duplicate') {
    if (result.replay) return { text: REPLAYED_COMMAND };
    return { text: `Already on it: that same request is job ${result.jobId}.` };
  }
  switch (deliveryOf(command.kind)) {
    case 'ephemeral':
      return withWarning(`:mag: Looking that up… (job ${result.jobId})`);
    case 'dm':
      return withWarning(':envelope: I will send it to you in a direct message.');
    default:
      // The channel message, posted right after this answer, is the answer: say nothing more here.
      return withWarning(
        result.message || result.followUp
          ? undefined
          : `:hourglass_flowing_sand: Queued as job ${result.jobId}.`,
      );
  }
}

/** What a direct answer needs, from the listener's deps and the policy. */
export function directContext(
  where: { readonly channelId: string; readonly userId: string },
  deps: SlackDeps,
): DirectContext {
  const { policy, approvals, audit } = deps.guardrails;
  return {
    channelId: where.channelId,
    userId: where.userId,
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
    pricing: policy.pricing,
    async approvalsFor(userId) {
      const [groups, pending] = await Promise.all([
        deps.ports.groupsOf(userId, groupsInPolicy(policy)),
        approvals.listPending({ limit: 200 }),
      ]);
      const mine = approvableBy(policy, userId, groups, pending);
      return { mine, own: pending.filter((r) => r.requester === userId) };
    },
  };
}
