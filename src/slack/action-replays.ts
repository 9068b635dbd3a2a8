import { createHash } from 'node:crypto';
import type { AnyMiddlewareArgs, Middleware } from '@slack/bolt';
import type { SlackDeps } from './slack-deps.js';
import { SIGNATURE_WINDOW_SECONDS } from './trigger-replays.js';

// A button press is a signed request too: whoever captures one (a proxy log, a HAR file) could send it
// again for as long as Bolt accepts its signature, five minutes, and the same Approve, Stop or Extend
// would run again once the listeners' own 30 s dedupes have expired. Each press Slack sends is unique
// (its action_ts, trigger_id, user, action and container), so the press is claimed in Redis for the
// whole signature window, as `/gpu` claims its trigger (trigger-replays.ts), and a second delivery of
// the same press is acknowledged and dropped before any listener sees it.

type Args = AnyMiddlewareArgs & { ack?: (answer?: unknown) => Promise<void>; next: () => Promise<void> };

/** The identity of one press: the same for a replayed body, different for any other click. */
export function pressIdOf(body: Record<string, unknown>): string | undefined {
  if (body.type !== 'block_actions') return undefined;
  const action = (body.actions as Array<Record<string, unknown>> | undefined)?.[0];
  const user = (body.user as { id?: string } | undefined)?.id;
  if (!action || typeof action.action_ts !== 'string' || !user) return undefined;
  const container = body.container as Record<string, unknown> | undefined;
  const where = [container?.view_id, container?.channel_id, container?.message_ts].map((v) =>
    String(v ?? ''),
  );
  const parts = [
    user,
    String(action.action_id ?? ''),
    action.action_ts,
    String(body.trigger_id ?? ''),
    ...where,
  ];
  return createHash('sha256').update(parts.join('\u0000')).digest('hex').slice(0, 40);
}

export function actionReplayGuard(deps: SlackDeps): Middleware<AnyMiddlewareArgs> {
  return async (raw) => {
    const args = raw as Args;
    const id = pressIdOf(args.body as unknown as Record<string, unknown>);
    if (id === undefined) return args.next();
    let holder: string | undefined;
    try {
      holder = await deps.store.claimTrigger(`press:${id}`, String(Date.now()), SIGNATURE_WINDOW_SECONDS);
    } catch (err) {
      // Redis down: the press goes on, and the listener says Redis is down (it cannot act without it).
      deps.log.warn({ err }, 'could not record a button press against replays');
      return args.next();
    }
    if (holder === undefined) return args.next();
    deps.log.info({ action: id }, 'dropped a button press Slack already delivered (a replay)');
    await args.ack?.();
  };
}
