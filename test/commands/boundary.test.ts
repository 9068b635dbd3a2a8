import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

// The command grammar is pure: no I/O, no Slack SDK, and from the cloud layer only its data and rules.
const DIR = join(import.meta.dirname, '../../src/command');
const ALLOWED = [/^zod$/, /^\.\/[a-z-]+\.js$/, /^\.\.\/cloud\/(routes|rules|shape)\.js$/];

describe('src/command imports', () => {
  it('stay pure', () => {
    const offending: string[] = [];
    for (const file of readdirSync(DIR).filter((f) => f.endsWith('.ts'))) {
      const source = readFileSync(join(DIR, file), 'utf8');
      for (const m of source.matchAll(/(?:^|\n)\s*(?:import|export)[^'";]*?from\s+['"]([^'"]+)['"]/g)) {
        const spec = m[1]!;
        if (!ALLOWED.some((re) => re.test(spec))) offending.push(`${file} imports ${spec}`);
      }
      if (/\bprocess\.env\b|\bfetch\(|node:/.test(source)) {
        offending.push(`${file} touches the environment or I/O`);
      }
    }
    expect(offending).toEqual([]);
  });
});
