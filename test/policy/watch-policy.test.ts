import { describe, expect, it } from 'vitest';
import { PolicyError, parsePolicy } from '../../src/policy/load-policy.js';
import { DEFAULT_POLICY } from '../../src/policy/policy.js';
import { CRON_RULE, TZ_RULE } from '../../src/policy/policy-schema.js';

// The watchers' settings in the policy file (docs/watch.md): safe defaults with no file, and a wrong
// schedule or time zone stops gpuops at start with its line, like every other setting.

describe('the watch, idle and digest settings', () => {
  it('default to a 30 s look, a 5 %/30 min idle rule checked every 5 min, and a 09:00 UTC digest', () => {
    expect(DEFAULT_POLICY.watch).toEqual({ pollEverySeconds: 30, capacityEverySeconds: 60 });
    expect(DEFAULT_POLICY.idle).toEqual({ thresholdPercent: 5, windowSeconds: 1800, checkEverySeconds: 300 });
    expect(DEFAULT_POLICY.digest).toEqual({ enabled: true, cron: '0 9 * * *', tz: 'UTC' });
  });

  it('reads every key, auto_stop_after included', () => {
    const policy = parsePolicy(
      [
        'watch:',
        '  poll_every: 1m',
        '  capacity_every: 5m',
        'idle:',
        '  threshold_percent: 2.5',
        '  window: 1h',
        '  auto_stop_after: 2h',
        '  check_every: 10m',
        'digest:',
        '  cron: "30 8  * * 1-5"',
        '  tz: Europe/Paris',
      ].join('\n'),
    );
    expect(policy.watch).toEqual({ pollEverySeconds: 60, capacityEverySeconds: 300 });
    expect(policy.idle).toEqual({
      thresholdPercent: 2.5,
      windowSeconds: 3600,
      autoStopAfterSeconds: 7200,
      checkEverySeconds: 600,
    });
    expect(policy.digest).toEqual({ enabled: true, cron: '30 8 * * 1-5', tz: 'Europe/Paris' });
  });

  it('refuses a schedule, a time zone or a threshold it cannot use, saying where', () => {
    const problem = (text: string) => {
      try {
        parsePolicy(text, 'policy.yaml');
      } catch (err) {
        if (err instanceof PolicyError) return err.problems[0];
      }
      throw new Error('expected a PolicyError');
    };
    expect(problem('digest:\n  cron: every morning\n')).toMatchObject({
      at: 'digest.cron',
      line: 2,
      rule: CRON_RULE,
    });
    expect(problem('digest:\n  tz: Mars/Olympus\n')).toMatchObject({
      at: 'digest.tz',
      line: 2,
      rule: TZ_RULE,
    });
    expect(problem('idle:\n  threshold_percent: 150\n')).toMatchObject({
      at: 'idle.threshold_percent',
      rule: 'threshold_percent must be at most 100',
    });
    expect(problem('idle:\n  windw: 1h\n')?.rule).toContain('unknown setting "windw"');
  });
});
