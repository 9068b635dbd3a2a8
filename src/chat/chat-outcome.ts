import { looksLikeError } from './chat-text.js';
import type { LocalSlackApi } from './local-slack-api.js';

// How a line of the terminal chat ended, read from what people saw after it: the Slack activity since
// a mark (LocalSlackApi.mark), drawn as the chat draws it. The chat's summary of failed lines says this.

/** What people saw since `mark` that reports a failure: a job that ended Failed, an error answer. */
export function failuresSince(slack: LocalSlackApi, mark: number): string[] {
  const out: string[] = [];
  const seen = new Set<number>();
  for (const activity of slack.activitySince(mark)) {
    if (activity.kind === 'message' && !seen.has(activity.message.number)) {
      seen.add(activity.message.number);
      const text = activity.message.text;
      if (!activity.message.deleted && /^Failed\b/.test(text ?? '')) {
        out.push(`#${activity.message.number} ${shown(slack, { text })}`);
      }
    }
    if (activity.kind === 'ephemeral' && looksLikeError(activity.ephemeral.text)) {
      out.push(shown(slack, activity.ephemeral));
    }
  }
  return out;
}

/** The first answer shown to `userId` alone since `mark`, as the chat drew it. */
export function answerTo(slack: LocalSlackApi, userId: string, mark: number): string | undefined {
  for (const activity of slack.activitySince(mark)) {
    if (activity.kind === 'ephemeral' && activity.ephemeral.user === userId) {
      const line = shown(slack, activity.ephemeral);
      if (line !== '') return line;
    }
  }
  return undefined;
}

/**
 * The first line of an answer as the chat shows it (mentions as @name, no emphasis marks), with a
 * failed job's repeat of the command (`Failed: /gpu … — `) left out: the summary names the line.
 */
function shown(
  slack: LocalSlackApi,
  content: { readonly text?: string | undefined; readonly blocks?: readonly unknown[] | undefined },
): string {
  const text = content.text?.replace(/^Failed: \/gpu\b[^\n]*? — /, 'Failed: ');
  return slack.firstLineShown({ ...content, text });
}
