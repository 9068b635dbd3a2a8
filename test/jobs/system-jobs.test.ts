import { describe, expect, it } from 'vitest';
import { isSystemJobData, parseJobData, parseSystemJobData } from '../../src/jobs/job-data.js';

const command = { kind: 'ls' } as const;
const ctx = { teamId: 'T1', channelId: 'C1', userId: 'U1', requestedAt: 1 };

describe('job payloads', () => {
  it('tells system jobs from requests', () => {
    expect(isSystemJobData({ v: 1, system: 'catalog.refresh' })).toBe(true);
    expect(isSystemJobData({ v: 1, command, ctx })).toBe(false);
    expect(isSystemJobData(null)).toBe(false);
  });

  it('checks a catalogue refresh, with the form it fills', () => {
    const data = { v: 1, system: 'catalog.refresh', view: { id: 'V1', hash: 'h1', metadata: '{}' } };
    expect(parseSystemJobData(data)).toEqual(data);
    expect(() => parseSystemJobData({ v: 1, system: 'catalog.refresh', projectId: 'x' })).toThrowError(
      /another version|projectId/,
    );
    expect(() => parseSystemJobData({ v: 1, system: 'reboot.everything' })).toThrow();
  });

  it('carries only references to sealed secrets, never other fields under `sealed`', () => {
    const ref = { sealedRef: 'A'.repeat(24) };
    expect(parseJobData({ v: 1, command, ctx, sealed: { userData: ref } }).sealed).toEqual({ userData: ref });
    expect(() =>
      parseJobData({ v: 1, command, ctx, sealed: { userData: { sealedRef: '#cloud-config' } } }),
    ).toThrow();
    const parsed = parseJobData({ v: 1, command, ctx, sealed: { kubeconfig: ref, plaintext: 'x' } });
    expect(JSON.stringify(parsed)).not.toContain('plaintext');
  });
});
