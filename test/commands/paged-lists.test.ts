import { describe, expect, it } from 'vitest';
import { commandTextOf, pagedList } from '../../src/commands/kit/paged-list.js';
import { parseCommand } from '../../src/commands/parse-command.js';
import { SPECS_IN_HELP_ORDER } from '../../src/commands/registry.js';

// Every list that is paged says so in its usage, takes `--page N`, and the command its Previous and
// Next buttons carry parses back to the same list at that page: a press shows what was listed.

const PAGED = SPECS_IN_HELP_ORDER.filter((s) => s.usage.includes('[--page N]'));

describe('paged lists', () => {
  it('are every list the cloud can make long', () => {
    expect(PAGED.map((s) => s.kind).sort()).toEqual(
      [
        'capacity',
        'fs',
        'k8s.ls',
        'k8s.pools',
        'keys',
        'ls',
        'projects',
        'slurm.ls',
        'slurm.pools',
        'slurm.users',
      ].sort(),
    );
  });

  it.each(PAGED.map((s) => [s.kind, s.example] as const))(
    '%s: the page button runs the same list',
    (_kind, example) => {
      const parsed = parseCommand(`${example.replace(/^\/gpu /, '')} --page 7`);
      expect(parsed.ok).toBe(true);
      if (!parsed.ok) return;
      expect(parsed.command).toMatchObject({ page: 7 });
      const again = parseCommand(commandTextOf({ ...parsed.command, page: 2 } as typeof parsed.command));
      expect(again).toEqual({ ok: true, command: { ...parsed.command, page: 2 } });
    },
  );
});

describe('a page past the end', () => {
  it('shows the last page and says there is no such page', () => {
    const { blocks } = pagedList({ kind: 'ls', page: 99 }, 'Instances (1)', ['🟢 demo-1 · running']);
    const text = JSON.stringify(blocks);
    expect(text).toContain('demo-1');
    expect(text).toContain('There is no page 99: the list has 1 page, and this is page 1.');
  });
});
