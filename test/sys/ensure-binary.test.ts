import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { AppError } from '../../src/errors.js';
import { ensureBinary, findBinary, isDebianLike } from '../../src/sys/ensure-binary.js';
import { findChartFonts } from '../../src/sys/fonts.js';

const dir = mkdtempSync(join(tmpdir(), 'gpuops-ensure-binary-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('ensureBinary', () => {
  it('finds a program on PATH and in the sbin folders Debian uses', async () => {
    const tool = join(dir, 'gpuops-test-tool');
    writeFileSync(tool, '#!/bin/sh\n');
    chmodSync(tool, 0o755);
    expect(findBinary('gpuops-test-tool', dir)).toBe(tool);
    expect(findBinary('sh', '')).toMatch(/^\/usr\/s?bin\/sh$/);
    expect(await ensureBinary('gpuops-test-tool', { debianPackage: 'x', install: false, pathEnv: dir })).toBe(
      tool,
    );
  });

  it('says exactly what to install when the program is missing and installing is not allowed', async () => {
    const err = await ensureBinary('gpuops-no-such-program', {
      debianPackage: 'prometheus',
      install: false,
      otherwise: 'install Prometheus 2.x and put it on PATH',
      pathEnv: dir,
    }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AppError);
    expect((err as Error).message).toBe(
      'gpuops-no-such-program is not installed: run `apt-get install -y prometheus` as root on Debian or Ubuntu, or install Prometheus 2.x and put it on PATH.',
    );
  });

  it('does not try apt-get off Debian even when allowed', async () => {
    const osRelease = join(dir, 'os-release-alpine');
    writeFileSync(osRelease, 'ID=alpine\nNAME="Alpine Linux"\n');
    const logged: string[] = [];
    const err = await ensureBinary('gpuops-no-such-program', {
      debianPackage: 'redis-server',
      install: true,
      pathEnv: dir,
      osReleaseFile: osRelease,
      log: (l) => logged.push(l),
    }).catch((e: unknown) => e);
    expect((err as Error).message).toContain('apt-get install -y redis-server');
    expect(logged).toEqual([]);
  });

  it('recognises Debian, Ubuntu and their derivatives from os-release', () => {
    const file = (name: string, text: string) => {
      const path = join(dir, name);
      writeFileSync(path, text);
      return path;
    };
    expect(isDebianLike(file('debian', 'PRETTY_NAME="Debian GNU/Linux 12"\nID=debian\n'))).toBe(true);
    expect(isDebianLike(file('ubuntu', 'ID=ubuntu\nID_LIKE=debian\n'))).toBe(true);
    expect(isDebianLike(file('mint', 'ID=linuxmint\nID_LIKE="ubuntu debian"\n'))).toBe(true);
    expect(isDebianLike(file('fedora', 'ID=fedora\n'))).toBe(false);
    expect(isDebianLike(join(dir, 'missing'))).toBe(false);
  });
});

describe('chart fonts', () => {
  it('finds a font file resvg can load, or says which package to install', () => {
    const fonts = findChartFonts();
    expect(fonts.files.length).toBeGreaterThan(0);
    expect(fonts.files[0]).toMatch(/\.ttf$/);
    expect(findChartFonts({ extraFiles: [fonts.files[0]!], extraFamily: 'X' }).family).toBe('X');
  });
});
