import { describe, expect, it } from 'vitest';
import { parseCommand } from '../../src/commands/parse-command.js';
import { SPECS_IN_HELP_ORDER } from '../../src/commands/registry.js';

// Every answer the parser can give to a line it refuses, reviewed once: the list below is generated
// from many bad lines (each subcommand with nothing, with a flag it lacks, with a word too many, and
// the bad values people type) and kept in a snapshot a reviewer reads as a whole. Each answer is one
// sentence that says what is wrong and what to type instead, and comes with a working example.

/** The words of a subcommand: `/gpu k8s pool add <cluster> …` → `k8s pool add`. */
const pathOf = (usage: string) =>
  usage
    .replace(/^\/gpu\s*/, '')
    .replace(/\[[^\]]*\]|<[^>]*>/g, ' ')
    .split(/\s+/)
    .filter((w) => /^[a-z][a-z0-9-]*$/.test(w))
    .join(' ');

const generated = SPECS_IN_HELP_ORDER.flatMap((spec) => {
  const path = pathOf(spec.usage);
  return [path, `${path} --bogus`, `${spec.example.replace(/^\/gpu\s*/, '')} extra`];
});

/** Bad values, as people type them. */
const BAD_VALUES = [
  'strat train-1',
  'ls --page 0',
  'ls --page two',
  'create -x h100-hgx-80gb.1x',
  'create train-1',
  'create train-1 h100-hgx-80gb.1x --tag a=1 --tag a=2',
  'create train-1 h100-hgx-80gb.1x --tag =1',
  'create train-1 h100-hgx-80gb.1x --preemptible maybe',
  'schedule stop train-1',
  'schedule start train-1 25:00',
  'schedule start train-1 20:00',
  'schedule stop train-1 daily 25:00 --tz Mars/Base',
  'schedule stop train-1 daily 24:00',
  'schedule stop train-1 daily 7pm',
  'schedule stop train-1 daily 20:75',
  'schedule stop train-1 weekdays 20:00 --tz Mars/Base',
  'schedule stop train-1 tomorrow 20:00',
  'schedule stop train-1 */5 * * * *',
  'schedule stop train-1 0 0 30 2 *',
  'schedule stop train-1 0 0 * * * *',
  'schedule stop =ml weekdays 20:00',
  'metrics train-1 --range 31d',
  'metrics train-1 --range 1 hour',
  'metrics train-1 --range 30s',
  'metrics query',
  'metrics querry up',
  'fs create data 12 parsecs',
  'k8s create prod 1.x',
  'k8s pool add prod gpu-a h100-hgx-80gb.8x 0',
  'k8s pool add prod gpu-a h100-hgx-80gb.8x 1001',
  'k8s label prod =x',
  'slurm adduser hpc --username Ada',
  'slurm sudo hpc ada maybe',
  'waitlist h100-hgx-80gb.8x 0',
  'waitlist h100-hgx-80gb.8x 65',
  'watch maybe',
  'audit 0',
  'audit 501',
  'help frobnicate',
  'k8s',
  'k8s frob',
  'slurm pool',
  'keys add laptop not-a-key',
];

const answers = [...new Set([...generated, ...BAD_VALUES])].flatMap((line) => {
  const parsed = parseCommand(line);
  return parsed.ok ? [] : [{ line: `/gpu ${line}`.trim(), error: parsed.error }];
});

describe('what the parser answers to a line it refuses', () => {
  it('is one sentence each, saying what is wrong and what to type instead, with a working example', () => {
    expect(answers.length).toBeGreaterThan(150);
    const bad = answers.filter(({ error }) => {
      const m = error.message;
      return (
        m.includes('\n') ||
        !/[.?]$/.test(m) ||
        m.length > 400 ||
        /\bundefined\b|\bnull\b|\[object|NaN|Error:|Invalid input|\(s\)|pattern \^/.test(m) ||
        !parseCommand(error.example.replace(/^\/gpu\s*/, '')).ok
      );
    });
    expect(bad.map((a) => `${a.line} → ${a.error.message}`)).toEqual([]);
  });

  it('names a page number a page number, not a count', () => {
    const page = answers.find((a) => a.line === '/gpu ls --page 0')!;
    expect(page.error.message).toBe(
      '"0" is not a valid page number: a page number is a whole number from 1 to 10000.',
    );
  });

  it('says what a schedule without a time, a bare or impossible time, and a bad zone each need', () => {
    const of = (line: string) => answers.find((a) => a.line === `/gpu ${line}`)!.error.message;
    expect(of('schedule stop train-1')).toMatch(
      /^A schedule needs a time after its target, such as `weekdays 20:00`/,
    );
    expect(of('schedule start train-1 25:00')).toBe(
      '`25:00` is not a schedule: 25 is not an hour (00 to 23), and a time needs its days in front, such as `daily 23:00`.',
    );
    expect(of('schedule start train-1 20:00')).toContain(
      '`daily 20:00`, `weekdays 20:00` or `weekends 20:00`',
    );
    // Both mistakes of one line, in one answer.
    const both = of('schedule stop train-1 daily 25:00 --tz Mars/Base');
    expect(both).toMatch(/^Two mistakes: `25:00` is not a time of day: 25 is not an hour/);
    expect(both).toContain('"Mars/Base" is not a time zone gpuops knows');
  });

  it('is the reviewed list (update with vitest -u after reading the difference)', async () => {
    const text = answers
      .map(
        ({ line, error }) =>
          `${line}\n    ${error.message}${error.suggestion ? `\n    ${error.suggestion}` : ''}\n    e.g. ${error.example}`,
      )
      .join('\n');
    await expect(`${text}\n`).toMatchFileSnapshot('./__snapshots__/error-wording.txt');
  });
});
