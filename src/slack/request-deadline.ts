import { type Deadline, deadlineIn } from '../commands/kit/deadline.js';

// The deadline of one Slack request, made by the first middleware that asks (the access gate, which
// runs first) and kept in Bolt's context, so every step before the acknowledgement shares it.

/** Slack gives up after 3 s; the answer leaves by this, counted from the request's arrival. */
export const ANSWER_WITHIN_MS = 2_500;

/**
 * The access look-ups (standing, user groups, the channel's project) stop this long before the
 * deadline: what comes after them (storing the request, opening a form) still has time.
 */
export const CHECK_RESERVE_MS = 500;

export const ACCESS_TOO_SLOW =
  'gpuops could not check your access in time (Slack or Redis answered too slowly), so nothing was started. Please try again in a minute.';

const KEY = 'gpuopsDeadline';

export function requestDeadline(context: Record<string, unknown> | undefined): Deadline {
  const known = context?.[KEY] as Deadline | undefined;
  if (known) return known;
  const deadline = deadlineIn(ANSWER_WITHIN_MS);
  if (context) context[KEY] = deadline;
  return deadline;
}
