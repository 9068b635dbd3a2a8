import { describe, expect, it } from 'vitest';
import { parseCommand } from '../../src/commands/parse-command.js';
import { referencesOf, SPECS_IN_HELP_ORDER } from '../../src/commands/registry.js';

// Every name a request gives that must already exist is declared (`refers`), so the pipeline checks it
// privately before anything is posted. A new subcommand that names a cluster and forgets to declare it
// would again fail in public: this test names it.

const examples = SPECS_IN_HELP_ORDER.map((doc) => {
  const parsed = parseCommand(doc.example.replace(/^\/gpu /, ''));
  if (!parsed.ok) throw new Error(`the example of ${doc.kind} does not parse: ${parsed.error.message}`);
  return [doc.kind, parsed.command] as const;
});

describe('what a request names is checked before it is queued', () => {
  it.each(examples.filter(([, c]) => 'cluster' in c))('%s declares its cluster', (kind, command) => {
    const family = kind.startsWith('k8s.') ? 'k8s cluster' : 'slurm cluster';
    expect(referencesOf(command)).toContainEqual({
      what: family,
      ref: (command as { cluster: string }).cluster,
    });
  });

  it('checks the key that keys rm names, and no key that keys add makes', () => {
    const byKind = new Map(examples);
    expect(referencesOf(byKind.get('keys.rm')!)).toEqual([{ what: 'key', ref: 'laptop' }]);
    expect(referencesOf(byKind.get('keys.add')!)).toEqual([]);
  });
});
