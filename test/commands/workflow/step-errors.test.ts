import { describe, expect, it } from 'vitest';
import { plainSentence } from '../../../src/commands/kit/finish-step.js';
import { blockedNote } from '../../../src/commands/kit/job-run.js';
import { postProblemNotice } from '../../../src/requests/enqueue-request.js';

// Workflow Builder shows a failed step's error as plain text: what gpuops says in Slack's formatting
// reads as words there, with the times and addresses in it untouched.

describe('a step error in plain words', () => {
  it('keeps channel names, drops emoji codes and marks', () => {
    expect(plainSentence(blockedNote('C0SECRET', 'not_in_channel'))).toBe(
      'I cannot post in C0SECRET (Slack said "not_in_channel"): invite @gpuops there, or use a public channel. I answer you here instead.',
    );
    expect(plainSentence(postProblemNotice('is_archived', 'Your request is queued as job j1.'))).toBe(
      'This channel is archived, so I cannot post here. Your request is queued as job j1. I will answer you privately; use an active channel next time.',
    );
  });

  it('shows a labelled link, a date fallback and a user by their text, and leaves times alone', () => {
    expect(
      plainSentence(
        '*Denied* by <@U0BOB> <!date^1767225600^{date_short}|1 Jan 2026> at 10:30:00, see <https://x.test|the log> `now`',
      ),
    ).toBe('Denied by U0BOB 1 Jan 2026 at 10:30:00, see the log now');
    expect(plainSentence('Log in with `ssh &lt;username&gt;@host` &amp; go')).toBe(
      'Log in with ssh <username>@host & go',
    );
  });
});
