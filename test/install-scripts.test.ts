import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

// `npm ci` (npm 11) skips the install script of a dependency package.json's allowScripts does not
// name, and ends with a warning a newcomer cannot act on. Every package in the lock file that has one
// is decided here, allowed (true) or denied (false), so a fresh `npm ci` prints no such warning. Nor
// does it warn that a dependency wants a newer Node than the one the project supports.

interface LockPackage {
  readonly hasInstallScript?: boolean;
  readonly name?: string;
}

const lock = JSON.parse(readFileSync('package-lock.json', 'utf8')) as {
  packages: Record<string, LockPackage>;
};
const manifest = JSON.parse(readFileSync('package.json', 'utf8')) as {
  allowScripts?: Record<string, boolean>;
};

describe('install scripts', () => {
  it('every dependency with an install script is allowed or denied in package.json', () => {
    const withScripts = Object.entries(lock.packages)
      .filter(([path, pkg]) => path !== '' && pkg.hasInstallScript === true)
      .map(
        ([path, pkg]) => pkg.name ?? path.slice(path.lastIndexOf('node_modules/') + 'node_modules/'.length),
      );
    const decided = new Set(
      Object.keys(manifest.allowScripts ?? {}).map((entry) => entry.replace(/(?<=.)@.*$/, '')),
    );
    expect(withScripts.length).toBeGreaterThan(0);
    expect([...new Set(withScripts)].filter((name) => !decided.has(name))).toEqual([]);
  });

  it('a fresh npm ci of the lock file warns about nothing (engines included)', () => {
    const dir = mkdtempSync(join(tmpdir(), 'gpuops-npm-ci-'));
    try {
      copyFileSync('package.json', join(dir, 'package.json'));
      copyFileSync('package-lock.json', join(dir, 'package-lock.json'));
      // A dry run reads only the lock file: offline, with an empty cache of its own.
      const run = spawnSync('npm', ['ci', '--dry-run', '--offline', '--no-audit', '--no-fund'], {
        cwd: dir,
        encoding: 'utf8',
        env: { ...process.env, npm_config_cache: join(dir, 'cache') },
      });
      expect(run.status, run.stderr).toBe(0);
      expect(run.stdout).toMatch(/added \d+ packages/);
      expect(run.stderr.split('\n').filter((line) => /^npm warn/i.test(line))).toEqual([]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
