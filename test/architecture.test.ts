import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

// The layer rules of docs/architecture.md, checked rather than hoped for: a folder that imports what it must not,
// a second reader of process.env, an import cycle or a file over 400 lines fails here with the offending file named.

const root = resolve(new URL('..', import.meta.url).pathname);
const src = join(root, 'src');

function walk(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? walk(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : [],
  );
}

const files = walk(src);
const IMPORT =
  /(?:^|\n)\s*(?:import|export)\s[^;]*?from\s+['"]([^'"]+)['"]|import\(\s*['"]([^'"]+)['"]\s*\)/g;

function importsOf(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  const out: string[] = [];
  for (const m of text.matchAll(IMPORT)) out.push((m[1] ?? m[2])!);
  return out;
}

/** Our own modules imported by a file, as paths relative to src/ (".js" specifiers mapped to ".ts"). */
function localImports(file: string): string[] {
  return importsOf(file)
    .filter((s) => s.startsWith('.'))
    .map((s) => relative(src, resolve(dirname(file), s.replace(/\.js$/, '.ts'))));
}

const rel = (file: string) => relative(src, file);
const inFolder = (file: string, folder: string) => rel(file).startsWith(`${folder}/`);

describe('architecture', () => {
  it('keeps the cloud layer free of Slack, BullMQ, Redis and the environment', () => {
    const offenders = files
      .filter((f) => inFolder(f, 'cloud'))
      .flatMap((f) => [
        ...importsOf(f)
          .filter((s) => /^(@slack\/|bullmq|ioredis)/.test(s))
          .map((s) => `${rel(f)} imports ${s}`),
        ...localImports(f)
          .filter((p) => !p.startsWith('cloud/') && p !== 'errors.ts')
          .map((p) => `${rel(f)} imports ${p}`),
      ]);
    expect(offenders).toEqual([]);
  });

  it('never lets the Slack layer reach the cloud client (pure route data and rules only)', () => {
    const allowed = new Set(['cloud/routes.ts', 'cloud/shape.ts', 'cloud/rules.ts']);
    const offenders = files
      .filter((f) => inFolder(f, 'slack'))
      .flatMap((f) =>
        localImports(f)
          .filter((p) => (p.startsWith('cloud/') && !allowed.has(p)) || p.startsWith('sim/'))
          .map((p) => `${rel(f)} imports ${p}`),
      );
    expect(offenders).toEqual([]);
  });

  it('keeps the request pipeline free of the Slack SDK and the Slack layer', () => {
    const offenders = files
      .filter((f) => inFolder(f, 'requests'))
      .flatMap((f) => [
        ...importsOf(f)
          .filter((s) => /^@slack\/(bolt|web-api|socket-mode)/.test(s))
          .map((s) => `${rel(f)} imports ${s}`),
        ...localImports(f)
          .filter((p) => p.startsWith('slack/') || p.startsWith('cloud/'))
          .map((p) => `${rel(f)} imports ${p}`),
      ]);
    expect(files.some((f) => inFolder(f, 'requests'))).toBe(true);
    expect(offenders).toEqual([]);
  });

  it('keeps render/ pure: no file, network or Redis I/O', () => {
    const io = /^(node:)?(fs|fs\/promises|net|http|https|child_process)$|^undici$|^ioredis$|^bullmq$/;
    const offenders = files
      .filter((f) => inFolder(f, 'render'))
      .flatMap((f) =>
        importsOf(f)
          .filter((s) => io.test(s))
          .map((s) => `${rel(f)} imports ${s}`),
      );
    expect(offenders).toEqual([]);
  });

  it('reads process.env only in config.ts, the composition root and the process helpers of sys/', () => {
    const roots = new Set(['config.ts', 'cli.ts', 'app/run-bot.ts']);
    const offenders = files
      .filter((f) => !roots.has(rel(f)) && !inFolder(f, 'sys'))
      // Handing the environment on to a child process (`{ ...process.env }`) is not reading it.
      .filter((f) => /process\.env\b/.test(readFileSync(f, 'utf8').replaceAll('...process.env', '')))
      .map(rel);
    expect(offenders).toEqual([]);
  });

  it('constructs clients and Redis connections only in composition roots (src/app, the demo, the tools run-*.ts)', () => {
    const constructs = /new WebClient\(|new Redis\(|\bcreate(Infra|Platform|Metrics)Client\(/;
    const offenders = files
      .filter((f) => !inFolder(f, 'app') && !inFolder(f, 'demo') && !/(^|\/)run-[a-z-]+\.ts$/.test(rel(f)))
      .filter((f) =>
        readFileSync(f, 'utf8')
          .split('\n')
          .some((line) => constructs.test(line) && !/\bfunction create/.test(line)),
      )
      .map(rel);
    expect(offenders).toEqual([]);
  });

  it('has no import cycles between the top-level folders of src/, type imports included', () => {
    const unit = (path: string) => (path.includes('/') ? path.split('/')[0]! : path.replace(/\.ts$/, ''));
    const edges = new Map<string, Set<string>>();
    for (const f of files) {
      for (const target of localImports(f)) {
        const [a, b] = [unit(rel(f)), unit(target)];
        if (a === b || target.startsWith('..')) continue;
        if (!edges.has(a)) edges.set(a, new Set());
        edges.get(a)!.add(b);
      }
    }
    // Every edge a → b with a path back b → … → a is part of a cycle.
    const reaches = (from: string, to: string, seen = new Set<string>()): boolean => {
      if (from === to) return true;
      if (seen.has(from)) return false;
      seen.add(from);
      return [...(edges.get(from) ?? [])].some((next) => reaches(next, to, seen));
    };
    const cyclic = [...edges].flatMap(([a, targets]) =>
      [...targets].filter((b) => reaches(b, a)).map((b) => `${a} → ${b}`),
    );
    expect(cyclic).toEqual([]);
  });

  it('has no import cycles', () => {
    const graph = new Map(files.map((f) => [rel(f), localImports(f)]));
    const cycles: string[] = [];
    const state = new Map<string, 'visiting' | 'done'>();
    const stack: string[] = [];
    const visit = (node: string) => {
      if (state.get(node) === 'done') return;
      if (state.get(node) === 'visiting') {
        cycles.push([...stack.slice(stack.indexOf(node)), node].join(' → '));
        return;
      }
      state.set(node, 'visiting');
      stack.push(node);
      for (const next of graph.get(node) ?? []) if (graph.has(next)) visit(next);
      stack.pop();
      state.set(node, 'done');
    };
    for (const node of graph.keys()) visit(node);
    expect(cycles).toEqual([]);
  });

  it('keeps every source file at 400 lines or fewer (split a longer one by what it does)', () => {
    const MAX_LINES = 400;
    const long = files
      .map((f) => ({ file: rel(f), lines: readFileSync(f, 'utf8').split('\n').length - 1 }))
      .filter((f) => f.lines > MAX_LINES)
      .map((f) => `${f.file}: ${f.lines} lines`);
    expect(long).toEqual([]);
  });
});
