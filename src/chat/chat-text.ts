// What the terminal chat says about itself, and how it tells an error from an answer.

export const CHAT_HELP = [
  'Chat commands (everything else starting with /gpu goes to the bot):',
  '  /gpu <command>        talk to gpuops as the current user in the current channel (/gpu help lists them)',
  '  2  or  /press 2       press button [2]; /press Approve presses the latest button labelled Approve',
  '  /press Deny reason="too big"   press it and answer the form it opens, field by field name',
  '  /step <step> k=v...   run a Workflow Builder step as a workflow would: /step stop_instance instance=train-01',
  '  /as <user>            act as someone else: a name (ada, bob) or a user id (U0BOB); /user does the same',
  '  /channel <channel>    switch channel: a name (gpu-ops, #ops) or an id (C0OPS)',
  '  home  or  /home       open your Home tab in Slack: your machines, approvals, spend, with buttons',
  '  /people               who is who in this demo',
  '  /cancel               close the form being filled in (at any of its prompts)',
  '  /help                 this list',
  '  /quit                 stop everything and leave (Ctrl-C or the end of input does the same)',
  'In a form: one prompt per field; Enter keeps the value shown; choose options by their number.',
];

/** Answers that say a request was refused or went wrong, where the bot answers in words alone. */
const ERROR_TEXT = [
  /^Failed\b/,
  /^:x:/,
  /^:no_entry/,
  /^:warning:/,
  /cannot reach its queue/,
  /^I could not /,
  /needs the \*?[a-z]+\*? role/,
  /^`\/gpu [^`]+` does not work with this cloud/,
  // A name that is not there (checked before anything is posted, so it comes as an answer alone).
  /^No (instance|filesystem|schedule|SSH key|Kubernetes cluster|Slurm cluster) "/,
  /^This channel's waitlist has no entry /,
  /is not an instance type this cloud offers/,
  /^That form is not available/,
  // An approval button refused (someone may not approve, or approves their own request).
  /Nothing was changed\.$/,
];

/** True when an answer shown to the requester reports a failure. */
export function looksLikeError(text: string | undefined): boolean {
  return text !== undefined && ERROR_TEXT.some((re) => re.test(text.trim()));
}

export function ackContent(response: unknown): { text?: string; blocks?: readonly unknown[] } | undefined {
  if (typeof response === 'string') return response === '' ? undefined : { text: response };
  if (typeof response !== 'object' || response === null) return undefined;
  const r = response as { text?: unknown; blocks?: unknown };
  const text = typeof r.text === 'string' && r.text !== '' ? r.text : undefined;
  const blocks = Array.isArray(r.blocks) && r.blocks.length > 0 ? r.blocks : undefined;
  if (text === undefined && blocks === undefined) return undefined;
  return { ...(text !== undefined ? { text } : {}), ...(blocks ? { blocks } : {}) };
}

/**
 * `text` on one line, cut to at most `max` characters at a word boundary with … when it is longer. A
 * text with no space in its second half (a key, a long token) is cut where the limit falls.
 */
export function clip(text: string, max: number): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  if (flat.length <= max) return flat;
  const cut = flat.slice(0, max - 1);
  const space = cut.lastIndexOf(' ');
  const head = space >= max / 2 ? cut.slice(0, space) : cut;
  return `${head.replace(/[\s,;:—-]+$/, '')}…`;
}

/** How much of a failed line's input and reason the summary shows. */
const INPUT_WIDTH = 80;
const REASON_WIDTH = 160;

/** A failed line's reason as the transcript notes it: one line, cut at a word boundary. */
export function failureReason(reason: string): string {
  return clip(reason, REASON_WIDTH);
}

/**
 * The summary a script prints on standard error: each failed line once, by number, its input
 * abbreviated, then the reason the chat gave.
 */
export function failureSummary(
  failures: readonly { readonly line: number; readonly input: string; readonly reason: string }[],
  lines: number,
): string {
  const head = `${failures.length} of ${lines} line${lines === 1 ? '' : 's'} failed:`;
  const body = failures.flatMap((f) => [
    `  line ${f.line}: ${clip(f.input, INPUT_WIDTH)}${f.input.length > INPUT_WIDTH ? ` (${f.input.length} characters)` : ''}`,
    `    ${failureReason(f.reason)}`,
  ]);
  return [head, ...body].join('\n');
}
