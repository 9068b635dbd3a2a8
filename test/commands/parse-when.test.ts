import { describe, expect, it } from 'vitest';
import {
  canonicalTimeZone,
  formatInZone,
  nextRun,
  nextRuns,
  parseWhen,
  runHoursPerMonth,
} from '../../src/commands/schedules/parse-when.js';

// The `<when>` of `/gpu schedule start|stop`: what people type, the cron pattern it becomes, and the
// wall-clock times it fires at in a time zone, across daylight-saving changes.

const at = (iso: string) => Date.parse(iso);
const iso = (d: Date | undefined) => d?.toISOString();

describe('parseWhen', () => {
  it.each([
    [['daily', '07:30'], 'daily 07:30', '30 7 * * *'],
    [['daily', '7:30'], 'daily 07:30', '30 7 * * *'],
    [['Weekdays', '20:00'], 'weekdays 20:00', '0 20 * * 1-5'],
    [['weekends', '09.15'], 'weekends 09:15', '15 9 * * 0,6'],
    [['0', '22', '*', '*', '1-5'], '0 22 * * 1-5', '0 22 * * 1-5'],
    [['30 7 1 * *'], '30 7 1 * *', '30 7 1 * *'],
  ])('%j → %s (%s)', (words, text, pattern) => {
    expect(parseWhen(words)).toEqual({ text, pattern });
  });

  it.each([
    [[], 'a schedule needs a time after its target, such as `weekdays 20:00`'],
    [['daily'], '`daily` takes one time of day after it, such as `daily 20:00`'],
    [
      ['daily', '24:00'],
      '`24:00` is not a time of day: 24 is not an hour (00 to 23); write it as `daily 23:00`',
    ],
    [['daily', '20:61'], '`20:61` is not a time of day: 61 is not a minute (00 to 59)'],
    [['daily', '7pm'], 'write it as `daily 19:00`'],
    [
      ['25:00'],
      '`25:00` is not a schedule: 25 is not an hour (00 to 23), and a time needs its days in front',
    ],
    [
      ['20:00'],
      '`20:00` needs the days it is for in front: `daily 20:00`, `weekdays 20:00` or `weekends 20:00`',
    ],
    [['weekdays', '8pm'], '`8pm` is not a time of day'],
    [['tomorrow', '20:00'], '`tomorrow 20:00` is not a schedule'],
    [['0', '0', '30', '2', '*'], '`0 0 30 2 *` never fires'],
    [['0', '0', '31', '4,6', '*'], '`0 0 31 4,6 *` never fires'],
    [['*/5', '*', '*', '*', '*'], 'fires more often than every 10 minutes'],
    [['0,5', '9', '*', '*', '*'], 'fires more often than every 10 minutes'],
    [['0', '0', '*', '*', '*', '*'], 'a seconds field is not taken'],
    [['61', '0', '*', '*', '*'], 'is not a cron expression gpuops can read'],
    [['bogus', 'x', 'y', 'z', 'w'], 'is not a cron expression gpuops can read'],
  ])('refuses %j: %s', (words, message) => {
    const result = parseWhen(words);
    expect(typeof result).toBe('string');
    expect(result).toContain(message);
  });
});

describe('time zones', () => {
  it('knows IANA zones and spells them canonically', () => {
    expect(canonicalTimeZone('Europe/Berlin')).toBe('Europe/Berlin');
    expect(canonicalTimeZone('europe/berlin')).toBe('Europe/Berlin');
    expect(canonicalTimeZone('UTC')).toBe('UTC');
    expect(canonicalTimeZone('America/Argentina/Buenos_Aires')).toMatch(/Buenos_Aires$/);
  });

  it.each(['Mars/Olympus', 'Europe/Atlantis', '', 'Berlin time', '../etc'])('refuses %j', (tz) => {
    expect(canonicalTimeZone(tz)).toBeUndefined();
  });
});

describe('firing times', () => {
  it('fires at 20:00 on the wall clock across the spring change (Berlin, 29 March 2026)', () => {
    const runs = nextRuns('0 20 * * 1-5', 'Europe/Berlin', at('2026-03-26T12:00:00Z'), 3);
    // Thursday and Friday in winter time (UTC+1), then Monday in summer time (UTC+2).
    expect(runs.map((d) => d.toISOString())).toEqual([
      '2026-03-26T19:00:00.000Z',
      '2026-03-27T19:00:00.000Z',
      '2026-03-30T18:00:00.000Z',
    ]);
  });

  it('fires at 07:30 on the wall clock across the autumn change (New York, 1 November 2026)', () => {
    const runs = nextRuns('30 7 * * *', 'America/New_York', at('2026-10-31T00:00:00Z'), 2);
    expect(runs.map((d) => d.toISOString())).toEqual([
      '2026-10-31T11:30:00.000Z',
      '2026-11-01T12:30:00.000Z',
    ]);
  });

  it('fires an hour late on the night the clock skips the hour it names, and once when it repeats', () => {
    // 02:30 does not exist in Berlin on 29 March 2026: it fires at 03:30 CEST (01:30 UTC).
    const spring = nextRuns('30 2 * * *', 'Europe/Berlin', at('2026-03-28T12:00:00Z'), 2);
    expect(spring.map((d) => d.toISOString())).toEqual([
      '2026-03-29T01:30:00.000Z',
      '2026-03-30T00:30:00.000Z',
    ]);
    // 02:30 happens twice on 25 October 2026: it fires at the first (CEST, 00:30 UTC) only.
    const autumn = nextRuns('30 2 * * *', 'Europe/Berlin', at('2026-10-24T12:00:00Z'), 2);
    expect(autumn.map((d) => d.toISOString())).toEqual([
      '2026-10-25T00:30:00.000Z',
      '2026-10-26T01:30:00.000Z',
    ]);
  });

  it('is the same instant read in different zones', () => {
    const after = at('2026-11-26T00:00:00Z');
    expect(iso(nextRun('0 20 * * *', 'UTC', after))).toBe('2026-11-26T20:00:00.000Z');
    expect(iso(nextRun('0 20 * * *', 'Asia/Tokyo', after))).toBe('2026-11-26T11:00:00.000Z');
    expect(nextRun('0 0 30 2 *', 'UTC', after)).toBeUndefined();
  });

  it("shows an instant in each viewer's zone", () => {
    const instant = at('2026-11-27T01:00:00Z'); // 20:00 Thursday in New York
    expect(formatInZone(instant, 'America/New_York')).toBe('Thu 26 Nov, 20:00');
    expect(formatInZone(instant, 'Asia/Tokyo')).toBe('Fri 27 Nov, 10:00');
    expect(formatInZone(instant, 'Europe/London')).toBe('Fri 27 Nov, 01:00');
  });
});

describe('hours a month a scheduled start runs', () => {
  const from = at('2026-11-26T00:00:00Z');
  const weekdays = (time: string) => ({
    pattern: `${time.split(':')[1]} ${Number(time.split(':')[0])} * * 1-5`,
    tz: 'Europe/London',
  });

  it('counts the whole month when nothing stops it', () => {
    expect(runHoursPerMonth(weekdays('07:30'), [], from)).toBe(730);
    expect(runHoursPerMonth({ pattern: '0 8 1 * *', tz: 'UTC' }, [], from)).toBe(730);
  });

  it('counts from each start to the next stop: weekdays 07:30 to 20:00 is 12.5 h a weekday', () => {
    const hours = runHoursPerMonth(weekdays('07:30'), [weekdays('20:00')], from)!;
    // 21 to 23 weekdays in a month of 30.4 days.
    expect(hours).toBeGreaterThanOrEqual(21 * 12.5);
    expect(hours).toBeLessThanOrEqual(23 * 12.5);
  });

  it('takes the earliest of several stops, in their own zones', () => {
    const start = { pattern: '0 8 * * *', tz: 'UTC' };
    // 09:00 UTC, and 10:00 in Berlin (09:00 UTC in winter): one hour a day either way.
    const hours = runHoursPerMonth(
      start,
      [
        { pattern: '0 12 * * *', tz: 'UTC' },
        { pattern: '0 10 * * *', tz: 'Europe/Berlin' },
      ],
      from,
    )!;
    expect(hours).toBeGreaterThanOrEqual(30);
    expect(hours).toBeLessThanOrEqual(32);
  });

  it('says nothing for a start that never fires', () => {
    expect(runHoursPerMonth({ pattern: '0 0 30 2 *', tz: 'UTC' }, [], from)).toBeUndefined();
  });
});
