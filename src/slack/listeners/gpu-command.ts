import type { App, SlackCommandMiddlewareArgs, SlashCommand } from '@slack/bolt';
import type { KnownBlock } from '@slack/types';
import { answerDirect } from '../../commands/answers.js';
import { orphanWarning, unavailableIn } from '../../commands/availability.js';
import { formatParseError } from '../../commands/help.js';
import { type Deadline, isDeadlinePassed } from '../../commands/kit/deadline.js';
import type { DirectContext } from '../../commands/kit/direct.js';
import { sections } from '../../commands/kit/direct.js';
import { settleWithin } from '../../commands/kit/with-deadline.js';
import { parseCommand } from '../../commands/parse-command.js';
import { deliveryOf } from '../../commands/registry.js';
import type { JobContext } from '../../jobs/job-data.js';
import { MaybeQueuedError } from '../../jobs/replicated.js';
import { approvableBy, groupsInPolicy } from '../../policy/decide.js';
import { acceptDirect, acceptRequest, checkAccess } from '../../requests/accept-request.js';
import { AddGate } from '../../requests/add-gate.js';
import { isRedisFull, REDIS_FULL } from '../../store/redis-full.js';
import { SLASH_COMMAND } from '../app-manifest.js';
import { ACCESS_TOO_SLOW, CHECK_RESERVE_MS, requestDeadline } from '../request-deadline.js';
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

/** The channel's project binding is read within this (Redis), inside the request's deadline. */
const BINDING_MS = 1_000;

class AnswerTooSlow extends Error {
  /** Nothing was handed to Redis by the deadline, and nothing will be (AddGate): nothing was started. */
  constructor(readonly nothingStarted: boolean) {
    super('no answer by the deadline');
  }
}

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
    // The deadline started when the request arrived (the access gate before this shares it).
    const deadline = requestDeadline(args.context as Record<string, unknown>);
    await answerCommand(args as unknown as SlackCommandMiddlewareArgs, deps, deadline);
  });
}

async function answerCommand(
  { command, ack, respond }: SlackCommandMiddlewareArgs,
  deps: SlackDeps,
  deadline: Deadline,
): Promise<void> {
  // The listener answers by the request's deadline, whatever Redis does (Slack gives up after 3 s): a
  // request whose job (or approval) was being handed to Redis then gets MAYBE_QUEUED, as it may yet
  // be stored; one not handed over by then never is, and is told that nothing was started.
  const gate = new AddGate();
  const answered = settleWithin(
    answer(command, deps, deadline, gate),
    deadline.left(),
    () => new AnswerTooSlow(gate.giveUp()),
  );
  const { followUp, ...reply } = await answered.catch((err: unknown): Reply => {
    // The access look-ups ran out of time: nothing was stored, so nothing was started.
    if (isDeadlinePassed(err)) {
      deps.log.warn({ err }, 'could not check access in time for /gpu');
      return { response_type: 'ephemeral', text: ACCESS_TOO_SLOW };
    }
    deps.log.error({ err }, 'could not accept /gpu');
    const maybe = err instanceof MaybeQueuedError || (err instanceof AnswerTooSlow && !err.nothingStarted);
    const text = maybe ? MAYBE_QUEUED : isRedisFull(err) ? REDIS_FULL : REDIS_DOWN;
    return { response_type: 'ephemeral', text };
  });
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

async function answer(
  slash: SlashCommand,
  deps: SlackDeps,
  deadline: Deadline,
  gate: AddGate,
): Promise<Reply> {
  const parsed = parseCommand(slash.text);
  if (!parsed.ok) {
    const text = formatParseError(parsed.error);
    return { text, blocks: sections([text]) };
  }
  const command = parsed.command;
  const missing = unavailableIn(command, deps.shape, deps.routes);
  if (missing) return { text: missing };
  deps.onCommand?.(command.kind);

  const access = { deadline, reserveMs: CHECK_RESERVE_MS };
  const binding = await deadline.race(deps.store.projectOf(slash.channel_id), 'Redis', {
    capMs: BINDING_MS,
    reserveMs: CHECK_RESERVE_MS,
  });
  const projectId = binding?.projectId ?? deps.defaultProjectId;
  const ctx: JobContext = {
    teamId: slash.team_id,
    channelId: slash.channel_id,
    // Typed in this channel: a role granted to it counts (docs/policy.md).
    madeIn: slash.channel_id,
    userId: slash.user_id,
    userName: slash.user_name,
    ...(projectId ? { projectId } : {}),
    ...(slash.response_url ? { responseUrl: slash.response_url } : {}),
    requestedAt: Date.now(),
  };
  switch (deliveryOf(command.kind)) {
    case 'direct': {
      // Answered here, but still checked (`/gpu audit` is for admins) and on the audit trail.
      const refused = await acceptDirect(deps, command, ctx, access);
      if (refused) return { text: refused.message };
      return answerDirect(
        command,
        directContext({ channelId: slash.channel_id, userId: slash.user_id, madeIn: slash.channel_id }, deps),
      );
    }
    default:
      break;
  }
  if ('modal' in command && command.modal) {
    // No form for someone who may not submit it; but the form opens before Slack's trigger id expires,
    // whatever the check takes (the submission is checked again).
    const checked = checkAccess(deps, command.kind, ctx, access);
    if (deps.openModal) return (await deps.openModal(command, slash, checked, deadline)) ?? {};
    const refused = await checked;
    if (refused) return { text: refused.message };
    return {
      text: 'That form is not available in this version; give the arguments instead (see /gpu help).',
    };
  }
  // A replayed request (valid signature, within five minutes) starts nothing new: its trigger is
  // claimed with the request itself.
  const result = await acceptRequest(deps, command, ctx, {
    deferPosts: true,
    deadline: access,
    gate,
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

/**
 * What a direct answer needs, from the listener's deps and the policy. `madeIn` is the channel typed
 * or clicked in (Slack's payload), whose grants may list approvals; none on the Home tab.
 */
export function directContext(
  where: { readonly channelId: string; readonly userId: string; readonly madeIn?: string },
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
      const mine = approvableBy(policy, userId, groups, pending, where.madeIn);
      return { mine, own: pending.filter((r) => r.requester === userId) };
    },
  };
}
