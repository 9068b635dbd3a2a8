import { describe, expect, it } from 'vitest';
import type { JobContext } from '../../src/jobs/job-data.js';
import { dedupeSeconds, requestTarget } from '../../src/requests/enqueue-request.js';

// How long a repeat can count as the same request, decided by what the command does rather than by
// where its answer goes: a lookup only absorbs a double click, a change half a minute.

const ctx = { teamId: 'T1', channelId: 'C1', userId: 'U1', projectId: 'p-1', requestedAt: 1 } as JobContext;

describe('the repeat window', () => {
  it('holds a lookup a few seconds whatever its delivery, a change half a minute', () => {
    // /gpu metrics posts to the channel, yet changes nothing: asked again, it wants a fresh chart.
    expect(dedupeSeconds({ kind: 'metrics', instance: 'train-1', rangeSeconds: 3600 })).toBe(3);
    expect(dedupeSeconds({ kind: 'schedules' })).toBe(3);
    expect(dedupeSeconds({ kind: 'stop', instance: 'train-1' })).toBe(30);
  });

  it('gives a change its machine as target in its project, and a lookup none', () => {
    const stop = requestTarget({ kind: 'stop', instance: 'train-1' }, ctx);
    expect(stop).toBeDefined();
    expect(requestTarget({ kind: 'start', instance: 'train-1' }, ctx)).toBe(stop);
    expect(requestTarget({ kind: 'start', instance: 'train-1' }, { ...ctx, projectId: 'p-2' })).not.toBe(
      stop,
    );
    expect(requestTarget({ kind: 'show', instance: 'train-1' }, ctx)).toBeUndefined();
  });
});
