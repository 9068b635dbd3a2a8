import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { renderCommandsDoc } from '../../src/commands/commands-doc.js';
import { SPECS_IN_HELP_ORDER } from '../../src/commands/registry.js';

describe('docs/commands.md', () => {
  const onDisk = readFileSync(new URL('../../docs/commands.md', import.meta.url), 'utf8');

  it('is what the registry generates (run `npm run docs:commands` after changing a spec)', () => {
    expect(onDisk === renderCommandsDoc(), 'docs/commands.md is stale: run npm run docs:commands').toBe(true);
  });

  it('shows every usage line and example people are shown in Slack', () => {
    const text = onDisk.replaceAll('\\|', '|');
    const missing = SPECS_IN_HELP_ORDER.flatMap((s) => [s.usage, s.example]).filter((s) => !text.includes(s));
    expect(missing).toEqual([]);
  });
});
