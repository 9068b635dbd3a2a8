import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { renderCommandsDoc, withShapeTable } from '../../src/commands/commands-doc.js';
import { SPECS_IN_HELP_ORDER } from '../../src/commands/registry.js';

describe('docs/commands.md', () => {
  const onDisk = readFileSync(new URL('../../docs/commands.md', import.meta.url), 'utf8');

  it('is what the registry generates (run `npm run docs:commands` after changing a spec)', () => {
    expect(onDisk === renderCommandsDoc(), 'docs/commands.md is stale: run npm run docs:commands').toBe(true);
  });

  it("is in the README's shape table too (run `npm run docs:commands`)", () => {
    const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');
    expect(
      readme === withShapeTable(readme),
      'README.md shape table is stale: run npm run docs:commands',
    ).toBe(true);
    expect(readme).toContain('| `fs rm` | — | — | ✓ |');
  });

  it('shows every usage line and example people are shown in Slack', () => {
    const text = onDisk.replaceAll('\\|', '|');
    const missing = SPECS_IN_HELP_ORDER.flatMap((s) => [s.usage, s.example]).filter((s) => !text.includes(s));
    expect(missing).toEqual([]);
  });
});
