import { describe, expect, it } from 'vitest';
import { escapeMrkdwn, formatParseError, helpText, packSections, usageFor } from '../../src/commands/help.js';
import { parseCommand } from '../../src/commands/parse-command.js';
import { HELP_TOPICS, SPECS_IN_HELP_ORDER } from '../../src/commands/registry.js';

describe('helpText', () => {
  it('gives an overview in several sections, each within the 3,000 characters of a Slack text block', () => {
    const sections = helpText();
    expect(sections.length).toBeGreaterThan(1);
    for (const section of sections) expect(section.length).toBeLessThanOrEqual(3000);
    const all = sections.join('\n');
    for (const doc of SPECS_IN_HELP_ORDER) expect(all).toContain(escapeMrkdwn(doc.usage));
    expect(all).toContain('*Values*');
  });

  it('shows usage and an example for every subcommand under a topic', () => {
    for (const doc of SPECS_IN_HELP_ORDER) {
      const path = doc.usage.replace(/^\/gpu /, '').split(' ')[0]!;
      const text = helpText(path).join('\n');
      expect(text).toContain(escapeMrkdwn(doc.usage));
      expect(text).toContain(`Example: \`${escapeMrkdwn(doc.example)}\``);
    }
    const pool = helpText('k8s pool').join('\n');
    expect(pool).toContain('/gpu k8s pool add');
    expect(pool).toContain('/gpu k8s pool rm');
    expect(pool).not.toContain('/gpu k8s ls');
  });

  it('keeps every topic within the Slack limit', () => {
    for (const topic of HELP_TOPICS) {
      for (const section of helpText(topic, { shape: 'A' })) expect(section.length).toBeLessThanOrEqual(3000);
    }
  });

  it('escapes angle brackets so Slack shows <instance> instead of reading it as a link', () => {
    const text = helpText('show').join('\n');
    expect(text).toContain('/gpu show &lt;instance&gt;');
    expect(text).not.toMatch(/<instance>/);
  });

  it('shows only what works with the configured cloud, and names what it hid and why', () => {
    const b = helpText(undefined, { shape: 'B' }).join('\n');
    expect(b).not.toContain('`/gpu fs rm <name|id>`');
    expect(b).toContain('/gpu fs create');
    expect(b).toContain('/gpu capacity');
    expect(b).toMatch(/_Not shown: .*`fs rm`.*This cloud's API cannot .*delete filesystems.*console or CLI/);
    expect(b).not.toMatch(/shape|listCapacity|deleteFilesystem/);
    // Topic help still lists the subcommand, saying in words why it does not work here.
    const c = helpText('k8s', { shape: 'C' }).join('\n');
    expect(c).toMatch(
      /k8s kubeconfig .*_\(does not work with this cloud: its API cannot look up kubeconfigs\)_/,
    );
    expect(c).not.toMatch(/k8s pools .*does not work/);
    expect(helpText('fs create', { shape: 'B' }).join('\n')).not.toContain('does not work');
  });

  it('falls back to the overview for an unknown topic', () => {
    expect(helpText('nope')).toEqual(helpText());
  });
});

describe('usageFor', () => {
  it('answers by kind or by words, and a group gives all its lines', () => {
    expect(usageFor('k8s.pool.add')).toBe('/gpu k8s pool add <cluster> [<name> <type> <count>]');
    expect(usageFor('k8s pool add')).toBe('/gpu k8s pool add <cluster> [<name> <type> <count>]');
    expect(usageFor('start')).toBe('/gpu start <instance>');
    expect(usageFor('slurm')?.split('\n')).toHaveLength(11);
    expect(usageFor('waitlist')).toBe('/gpu waitlist\n/gpu waitlist <type> [<count>]\n/gpu waitlist rm <id>');
    expect(usageFor('nothing')).toBeUndefined();
  });
});

describe('packSections', () => {
  it('never splits a line and never passes the limit', () => {
    const lines = Array.from({ length: 50 }, (_, i) => `${i} ${'x'.repeat(90)}`);
    const sections = packSections(lines, 1000);
    expect(sections.join('\n')).toBe(lines.join('\n'));
    for (const section of sections) expect(section.length).toBeLessThanOrEqual(1000);
  });
});

describe('formatParseError', () => {
  it('shows message, suggestion, usage and example, escaping what the person typed', () => {
    const result = parseCommand('strat <b>&');
    if (result.ok) throw new Error('expected an error');
    const text = formatParseError(result.error);
    expect(text).toContain('There is no subcommand "strat".');
    expect(text).toContain('Did you mean `/gpu start`?');
    expect(text).toContain('*Usage:* `/gpu start &lt;instance&gt;`');
    expect(text).toContain('*Example:* `/gpu start train-01`');
  });
});
