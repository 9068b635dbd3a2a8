import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { GPU_COMMAND_KINDS } from '../../src/commands/registry.js';

// Command specs, the parser, help and forms are pure: no I/O, no Slack SDK beyond its types, and from
// the cloud layer only its route data and rules. Only a family's handlers (handlers.ts) and direct
// answers (answers.ts) act, and they get their clients as parameters.
const DIR = join(import.meta.dirname, '../../src/commands');
const ACTING = /(^|\/)(handlers|answers)\.ts$|-handler\.ts$|(^|\/)kit\//;
const ALLOWED = [
  /^zod$/,
  /^@slack\/types$/,
  /^\.\.?\/(\.\.\/)?[a-z0-9-]+(\/[a-z0-9-]+)?\.js$/,
  /^yaml$/,
  // Pure: reads a cron pattern and walks its dates (the `<when>` of /gpu schedule).
  /^cron-parser$/,
  /^(\.\.\/)+cloud\/(routes|rules|shape|operation-words)\.js$/,
  /^(\.\.\/)+(pricing|render)\/[a-z-]+\.js$/,
  /^(\.\.\/)+store\/catalog-cache\.js$/,
];

function walk(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? walk(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : [],
  );
}

describe('src/commands specs, parser and forms', () => {
  it('stay pure', () => {
    const offending: string[] = [];
    const pure = walk(DIR).filter((f) => !ACTING.test(relative(DIR, f)));
    expect(pure.length).toBeGreaterThan(20);
    for (const file of pure) {
      const name = relative(DIR, file);
      const source = readFileSync(file, 'utf8');
      for (const m of source.matchAll(
        /(?:^|\n)\s*(import type|import|export)[^'";]*?from\s+['"]([^'"]+)['"]/g,
      )) {
        const spec = m[2]!;
        // Types of what the store holds are plain data; only its code does I/O.
        if (m[1] === 'import type' && /^(\.\.\/)+store\//.test(spec)) continue;
        if (/^(\.\.\/)+(cloud|store)\//.test(spec) && !ALLOWED.slice(4).some((re) => re.test(spec))) {
          offending.push(`${name} imports ${spec}`);
        } else if (!ALLOWED.some((re) => re.test(spec))) offending.push(`${name} imports ${spec}`);
      }
      if (/\bprocess\.env\b|\bfetch\(|['"]node:/.test(source))
        offending.push(`${name} touches the environment or I/O`);
    }
    expect(offending).toEqual([]);
  });
});

// What a command does is declared in its spec (its effects, cost, class…); code outside a family
// folder reads the declaration and never tests which command it holds.
const SRC = join(import.meta.dirname, '../../src');
const FAMILY = /^commands\/[a-z0-9-]+\//;

describe('outside the family folders', () => {
  it("no file tests a command's kind", () => {
    const kinds = new Set<string>(GPU_COMMAND_KINDS);
    const offending: string[] = [];
    for (const file of walk(SRC)) {
      const name = relative(SRC, file);
      if (FAMILY.test(name)) continue;
      readFileSync(file, 'utf8')
        .split('\n')
        .forEach((line, i) => {
          const byName = /\bcommand\??\.kind\s*[!=]==/.test(line);
          const byValue = [...line.matchAll(/\.kind\s*[!=]==\s*['"]([^'"]+)['"]/g)].some((m) =>
            kinds.has(m[1]!),
          );
          if (byName || byValue) offending.push(`${name}:${i + 1}: ${line.trim()}`);
        });
    }
    expect(offending).toEqual([]);
  });
});
