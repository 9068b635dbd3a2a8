import { type ChildProcess, spawn } from 'node:child_process';
import { connect } from 'node:net';
import { fileURLToPath } from 'node:url';
import { request } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import { parseSimArgs } from '../../src/sim/run-sim.js';
import type { ReadyInfo } from '../../src/sim/start-sim.js';

const bin = fileURLToPath(new URL('../../bin/gpuops.js', import.meta.url));
let child: ChildProcess | undefined;

afterEach(() => {
  if (child && child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  child = undefined;
});

interface Started {
  info: ReadyInfo;
  stdout: () => string;
  stderr: () => string;
  exited: Promise<number | null>;
}

function startCli(args: string[]): Promise<Started> {
  const proc = spawn(process.execPath, [bin, 'sim', ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  child = proc;
  let out = '';
  let err = '';
  const exited = new Promise<number | null>((resolve) => proc.on('exit', (code) => resolve(code)));
  return new Promise((resolve, reject) => {
    proc.stderr.on('data', (d: Buffer) => {
      err += d.toString();
    });
    proc.stdout.on('data', (d: Buffer) => {
      out += d.toString();
      const nl = out.indexOf('\n');
      if (nl >= 0)
        resolve({ info: JSON.parse(out.slice(0, nl)), stdout: () => out, stderr: () => err, exited });
    });
    proc.on('exit', (code) => reject(new Error(`gpuops sim exited ${code} before its ready line: ${err}`)));
  });
}

const portOpen = (url: string) =>
  new Promise<boolean>((resolve) => {
    const { hostname, port } = new URL(url);
    const socket = connect(Number(port), hostname);
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });

describe('gpuops sim', () => {
  it('prints one JSON ready line, serves the API, and exits 0 on SIGTERM with the port closed', async () => {
    const s = await startCli(['--port', '0', '--shape', 'B']);
    for (const key of [
      'cloudUrl',
      'platformUrl',
      'metricsUrl',
      'authUrl',
      'cloudToken',
      'platformApiKey',
      'metricsApiKey',
      'clientId',
      'clientSecret',
      'cloudAudience',
      'metricsAudience',
      'projectId',
      'controlUrl',
    ]) {
      expect(typeof (s.info as unknown as Record<string, unknown>)[key], key).toBe('string');
    }
    expect(s.info.shape).toBe('B');
    expect(typeof s.info.metricsAvailable).toBe('boolean');
    expect(s.info.cloudUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/api\/v1alpha1$/);
    expect(s.info.metricsAudience).toBe(s.info.metricsUrl.replace(/\/read$/, ''));

    const res = await request(`${s.info.cloudUrl}/instances`, {
      headers: { authorization: `Bearer ${s.info.cloudToken}`, 'x-project-id': s.info.projectId },
    });
    expect(res.statusCode).toBe(200);
    expect(await res.body.json()).toEqual([]);
    expect(s.stderr()).not.toContain(s.info.cloudToken);

    child!.kill('SIGTERM');
    expect(await s.exited).toBe(0);
    expect(s.stdout().trim().split('\n')).toHaveLength(1);
    expect(await portOpen(s.info.cloudUrl)).toBe(false);
  });

  it('refuses bad arguments with a clear message and exit code 2', async () => {
    const proc = spawn(process.execPath, [bin, 'sim', '--shape', 'D'], { stdio: ['ignore', 'pipe', 'pipe'] });
    child = proc;
    let err = '';
    proc.stderr.on('data', (d: Buffer) => {
      err += d.toString();
    });
    const code = await new Promise<number | null>((resolve) => proc.on('exit', resolve));
    expect(code).toBe(2);
    expect(err).toContain('--shape must be one of A, B, C');
  });

  it('parses its options', () => {
    expect(parseSimArgs(['--port=8080', '--host', '0.0.0.0', '--shape', 'c', '--seed', '9'])).toEqual({
      shape: 'C',
      port: 8080,
      host: '0.0.0.0',
      seed: 9,
    });
    expect(parseSimArgs(['--clock', 'manual', '--transition-ms', '10', '--no-metrics'])).toEqual({
      shape: 'B',
      clock: 'manual',
      transitionMs: 10,
      metrics: false,
    });
    expect(() => parseSimArgs(['--port', '70000'])).toThrow(/--port must be a whole number from 0 to 65535/);
    expect(() => parseSimArgs(['--port'])).toThrow(/--port needs a value/);
    expect(() => parseSimArgs(['--verbose'])).toThrow(/unknown option "--verbose"/);
  });
});
