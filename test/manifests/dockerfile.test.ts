import { execFile } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { envSchema } from '../../src/config.js';
import { createBotMetrics } from '../../src/obs/bot-metrics.js';
import { healthRoutes } from '../../src/obs/health-routes.js';
import { type RouteServer, startRouteServer } from '../../src/obs/route-server.js';

// The image an operator builds must be what docs/operations.md describes: built in one stage, run in
// another with production dependencies only, as a non-root user, under tini so SIGTERM reaches node,
// checked on a route the process serves, starting a role the CLI has. Nothing here needs Docker.

const root = new URL('../../', import.meta.url).pathname;
const run = promisify(execFile);

interface Instruction {
  readonly op: string;
  readonly args: string;
}
interface Stage {
  readonly from: string;
  readonly name: string | undefined;
  readonly steps: Instruction[];
}

/** The Dockerfile as stages of instructions (continuation lines joined, comments dropped). */
function readDockerfile(): { args: Map<string, string>; stages: Stage[] } {
  const text = readFileSync(join(root, 'Dockerfile'), 'utf8');
  const lines = text
    .replace(/\\\n/g, ' ')
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '' && !l.startsWith('#'));
  const args = new Map<string, string>();
  const stages: Stage[] = [];
  for (const line of lines) {
    const [op = '', ...rest] = line.split(/\s+/);
    const body = rest.join(' ');
    if (op.toUpperCase() === 'ARG' && stages.length === 0) {
      const [key = '', value = ''] = body.split('=');
      args.set(key, value);
    } else if (op.toUpperCase() === 'FROM') {
      const m = /^(\S+)(?:\s+AS\s+(\S+))?$/i.exec(body);
      const image = (m?.[1] ?? '').replace(/\$\{(\w+)\}/g, (_all, key: string) => args.get(key) ?? '');
      stages.push({ from: image, name: m?.[2], steps: [] });
    } else {
      stages.at(-1)?.steps.push({ op: op.toUpperCase(), args: body });
    }
  }
  return { args, stages };
}

const { stages } = readDockerfile();
const build = stages[0]!;
const runtime = stages.at(-1)!;
const steps = (stage: Stage, op: string) => stage.steps.filter((s) => s.op === op).map((s) => s.args);
const json = (args: string): string[] => JSON.parse(args) as string[];

describe('Dockerfile', () => {
  it('builds in one stage and runs in another on the same Node LTS slim image', () => {
    expect(stages.map((s) => s.name)).toEqual(['build', 'runtime']);
    expect(runtime.from).toBe(build.from);
    const m = /^node:(\d+)-[a-z]+-slim$/.exec(build.from);
    expect(m, build.from).not.toBeNull();
    // LTS lines are the even majors, and the image is at least what package.json's engines asks.
    const major = Number(m![1]);
    expect(major % 2).toBe(0);
    const engines = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).engines.node as string;
    expect(major).toBeGreaterThanOrEqual(Number(/\d+/.exec(engines)![0]));
  });

  it('installs with npm ci, compiles, and ships production dependencies only', () => {
    const runs = steps(build, 'RUN').join('\n');
    expect(runs).toMatch(/npm ci\b/);
    expect(runs.indexOf('npm ci')).toBeLessThan(runs.indexOf('npm run build'));
    expect(runs).toMatch(/npm prune --omit=dev/);
    const copies = steps(runtime, 'COPY');
    expect(copies.filter((c) => c.includes('--from=build')).map((c) => c.split(/\s+/).at(-2))).toEqual([
      '/app/package.json',
      '/app/node_modules',
      '/app/dist',
    ]);
    // No sources, tests or tooling in the image: bin/gpuops.js then runs dist/.
    expect(copies.some((c) => /\bsrc\b|\btest\b/.test(c) && !c.includes('--from=build'))).toBe(false);
    expect(copies).toContainEqual(expect.stringMatching(/\bbin \.\/bin$/));
  });

  it('runs as the non-root node user under tini, with the CLI role start', () => {
    const ops = runtime.steps.map((s) => s.op);
    expect(steps(runtime, 'USER')).toEqual(['node']);
    // Everything after USER runs as node; apt-get ran before it, as root.
    expect(ops.indexOf('USER')).toBeGreaterThan(ops.lastIndexOf('RUN'));
    expect(steps(runtime, 'RUN').join(' ')).toMatch(/apt-get install .*\btini\b/);
    const entrypoint = json(steps(runtime, 'ENTRYPOINT')[0]!);
    expect(entrypoint).toEqual(['/usr/bin/tini', '--', 'node', 'bin/gpuops.js']);
    const cmd = json(steps(runtime, 'CMD')[0]!);
    expect(cmd).toEqual(['start']);
    const cli = readFileSync(join(root, 'src/cli.ts'), 'utf8');
    expect(cli).toMatch(new RegExp(`^\\s+${cmd[0]}: async`, 'm'));
  });

  it('listens on the default PORT of the configuration', () => {
    const port = envSchema.shape.PORT.parse(undefined);
    expect(steps(runtime, 'EXPOSE')).toEqual([String(port)]);
    expect(steps(runtime, 'ENV').join(' ')).toContain(`PORT=${port}`);
  });

  it('keeps secrets, build output and dependencies out of the build context', () => {
    const ignored = readFileSync(join(root, '.dockerignore'), 'utf8').split('\n');
    for (const entry of ['node_modules', 'dist', '.git', '.env', 'test']) expect(ignored).toContain(entry);
  });

  it('imports no development dependency from src (the image has none)', () => {
    const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
    const dev = Object.keys(pkg.devDependencies ?? {});
    const walk = (dir: string): string[] =>
      readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
        e.isDirectory() ? walk(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : [],
      );
    const offenders = walk(join(root, 'src')).flatMap((file) => {
      const text = readFileSync(file, 'utf8');
      return (
        [...text.matchAll(/(?:from\s+|import\(\s*)['"]([^'".][^'"]*)['"]/g)]
          .map((m) => m[1]!)
          // import type is erased at compile time.
          .filter((spec) => dev.some((d) => spec === d || spec.startsWith(`${d}/`)))
          .filter((spec) => !new RegExp(`import\\s+type\\s[^;]*['"]${spec}['"]`).test(text))
          .map((spec) => `${file.slice(root.length)} imports ${spec}`)
      );
    });
    expect(offenders).toEqual([]);
  });

  describe('HEALTHCHECK', () => {
    let server: RouteServer;
    const command = (): string => {
      const health = steps(runtime, 'HEALTHCHECK')[0]!;
      const at = health.indexOf('CMD ');
      expect(at).toBeGreaterThan(0);
      return health.slice(at + 4);
    };

    beforeAll(async () => {
      const routes = healthRoutes({
        redisPing: async () => 'PONG',
        queueCheck: async () => ({}),
        metrics: createBotMetrics({ defaultMetrics: false }),
        shuttingDown: () => false,
      });
      server = await startRouteServer(routes, 0, '127.0.0.1');
    });
    afterAll(async () => {
      await server?.close();
    });

    it('asks /healthz on OPS_PORT, which every role serves, and passes while the process answers', async () => {
      expect(command()).toContain("'/healthz'");
      const [bin, flag, script] = command()
        .match(/^(node) (-e) "(.*)"$/)!
        .slice(1) as [string, string, string];
      const ok = await run(bin === 'node' ? process.execPath : bin, [flag, script], {
        env: { PATH: process.env.PATH, OPS_PORT: String(server.port) },
      });
      expect(ok.stderr).toBe('');
      // A port nobody listens on: the check fails (exit 1), so Docker marks the container unhealthy.
      await server.close();
      await expect(
        run(process.execPath, [flag, script], {
          env: { PATH: process.env.PATH, OPS_PORT: String(server.port) },
        }),
      ).rejects.toMatchObject({ code: 1 });
    });
  });
});
