import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { kindsOfClass, OPERATION_CLASSES } from '../../src/commands/registry.js';
import { GPU_MODELS } from '../../src/pricing/instance-types.js';

// docs/policy.md is what a team reads to write its policy: its tables must say what the code does.
const doc = readFileSync(new URL('../../docs/policy.md', import.meta.url), 'utf8');
// The kinds of each class are generated into docs/commands.md, which policy.md links to.
const commands = readFileSync(new URL('../../docs/commands.md', import.meta.url), 'utf8');

describe('docs/policy.md', () => {
  it('lists every kind under the class the code gives it (in the generated docs/commands.md)', () => {
    expect(doc).toContain('commands.md#operation-classes');
    for (const cls of OPERATION_CLASSES) {
      const row = `| \`${cls}\` | ${kindsOfClass(cls)
        .map((k) => `\`${k}\``)
        .join(', ')} |`;
      expect(commands, cls).toContain(row);
    }
  });

  it('documents every built-in instance type model prefix', () => {
    for (const model of GPU_MODELS) {
      expect(doc, model.prefix).toContain(`| \`${model.prefix}\` | \`${model.gpuType}\` |`);
    }
  });
});
