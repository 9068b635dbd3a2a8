import { z } from 'zod';

// The Home tab's own buttons. Each one runs a `/gpu` command as if typed in a given channel, so it
// meets the same roles, approvals, queue and audit trail (src/slack/listeners/home-actions.ts). Approve,
// Deny and the form buttons are the ones messages already carry.

export const HOME_ACTION_PREFIX = 'gpuops.home.run.';

/** What each Home button runs, by the last word of its action id. */
export const HOME_RUNS = {
  start: 'start',
  stop: 'stop',
  metrics: 'metrics',
  'waitlist-rm': 'waitlist.rm',
  'schedule-rm': 'schedule.rm',
} as const;
export type HomeRun = keyof typeof HOME_RUNS;

/** True when `command` is the one a Home button of `run` makes: a value edited by hand is not. */
export const isHomeRun = (run: HomeRun, command: { readonly kind: string }): boolean =>
  command.kind === HOME_RUNS[run];

export const homeActionId = (run: HomeRun): string => `${HOME_ACTION_PREFIX}${run}`;

const valueSchema = z.object({
  /** The command's words after `/gpu`. */
  t: z.string().min(1).max(300),
  /** The channel it runs in. */
  c: z.string().regex(/^[CGD][A-Z0-9]+$/),
  /** The project, when the machine's is known. */
  p: z.uuid().optional(),
});
export type HomeButtonValue = z.infer<typeof valueSchema>;

export function homeButtonValue(value: HomeButtonValue): string {
  return JSON.stringify(valueSchema.parse(value));
}

/** The press's run and value, or undefined when either is not one of ours. */
export function readHomeButton(
  actionId: string,
  value: string | undefined,
): { readonly run: HomeRun; readonly value: HomeButtonValue } | undefined {
  const run = actionId.slice(HOME_ACTION_PREFIX.length);
  if (!actionId.startsWith(HOME_ACTION_PREFIX) || !(run in HOME_RUNS) || !value) return undefined;
  try {
    const parsed = valueSchema.safeParse(JSON.parse(value));
    return parsed.success ? { run: run as HomeRun, value: parsed.data } : undefined;
  } catch {
    return undefined;
  }
}
