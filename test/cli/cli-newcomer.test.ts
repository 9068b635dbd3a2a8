import { execFileSync } from 'node:child_process';
import { afterEach, describe, expect, it } from 'vitest';
import { type GpuopsProcess, spawnGpuops } from '../support/gpuops-process.js';

// What a newcomer meets first at the command line: a typo in the command gets a suggestion, `gpuops
// start` with nothing set says what is missing and that the demo needs none of it, `gpuops snapshot`
// says where its metrics settings come from, and `gpuops sim --env` gives settings a shell can take.

const running: GpuopsProcess[] = [];
afterEach(async () => {
  await Promise.all(running.splice(0).map((p) => p.kill()));
});

async function gpuops(args: readonly string[]) {
  const child = spawnGpuops(args, {});
  running.push(child);
  const { code } = await child.exited;
  return { code, stdout: child.lines.join('\n'), stderr: child.stderr() };
}

/** Resolves once a stdout line satisfies the predicate (the process keeps running). */
function lineMatching(child: GpuopsProcess, predicate: (line: string) => boolean): Promise<void> {
  return new Promise((resolve, reject) => {
    const check = () => {
      if (child.lines.some(predicate)) {
        child.child.stdout?.off('data', onData);
        resolve();
      }
    };
    const onData = () => setImmediate(check);
    child.child.stdout?.on('data', onData);
    child.exited.then(() => reject(new Error(`exited first: ${child.stderr()}`)));
    check();
  });
}

describe('gpuops for a newcomer', { timeout: 60_000 }, () => {
  it('suggests the command a typo was near, and lists them all', async () => {
    const strat = await gpuops(['strat']);
    expect(strat.code).toBe(2);
    expect(strat.stderr).toContain('gpuops: unknown command "strat". Did you mean gpuops start?');
    expect(strat.stderr).toContain('The commands are start, web, worker, sim, snapshot, audit, spend, demo.');
    const far = await gpuops(['frobnicate']);
    expect(far.stderr).not.toContain('Did you mean');
  });

  it('lists what gpuops start is missing and says the demo needs none of it', async () => {
    const start = await gpuops(['start']);
    expect(start.code).toBe(1);
    expect(start.stderr).toContain('SLACK_BOT_TOKEN: required');
    expect(start.stderr).toContain('CLOUD_API_URL: required');
    expect(start.stderr).toContain('run gpuops demo: it needs none of these.');
  });

  it('says why a demo script cannot be read and what to give instead', async () => {
    const missing = await gpuops(['demo', '--script', 'no-such-script.txt']);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain(
      'gpuops demo: cannot read the script file no-such-script.txt: there is no such file. Give a text file',
    );
    expect(missing.stderr).toContain('or --script - to read them from standard input.');
    // A folder can be opened but not read as lines: it is refused before anything starts.
    const folder = await gpuops(['demo', '--script', 'docs']);
    expect(folder.code).toBe(2);
    expect(folder.stderr).toContain('cannot read the script file docs: it is a folder.');
  });

  it('tells gpuops snapshot where to get its metrics settings', async () => {
    const snapshot = await gpuops(['snapshot', 'train-1', '--out', 'never.png']);
    expect(snapshot.code).toBe(1);
    expect(snapshot.stderr).toContain('METRICS_URL: required');
    expect(snapshot.stderr).toContain('run gpuops sim --env in another terminal');
  });

  it('prints the simulator ready line as export lines a shell takes, which reach the simulator', async () => {
    const sim = spawnGpuops(['sim', '--env', '--no-metrics', '--shape', 'C'], {});
    running.push(sim);
    await lineMatching(sim, (line) => line.startsWith("# the simulator's control API:"));
    for (const line of sim.lines) expect(line).toMatch(/^(export [A-Z_]+=\S+|# .+)$/);
    // The lines, run by a shell, set gpuops' own settings, and the cloud answers to them.
    const keys = ['CLOUD_API_URL', 'CLOUD_API_TOKEN', 'CLOUD_PROJECT_ID', 'CLOUD_API_SHAPE', 'METRICS_URL'];
    const script = `${sim.lines.join('\n')}\n${keys.map((k) => `printf '%s\\n' "\${${k}:-unset}"`).join('\n')}`;
    const [url, token, project, shape, metrics] = execFileSync('sh', ['-c', script], { encoding: 'utf8' })
      .trimEnd()
      .split('\n');
    expect([shape, metrics]).toEqual(['C', 'unset']);
    const answer = await fetch(`${url}/instances`, {
      headers: { authorization: `Bearer ${token}`, 'x-project-id': project! },
    });
    expect(answer.status).toBe(200);
    expect(sim.lines.join('\n')).toContain('# no METRICS_URL: metrics are turned off');
  });
});
