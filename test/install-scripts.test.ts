import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

// `npm ci` (npm 11) skips the install script of a dependency package.json's allowScripts does not
// name, and ends with a warning a newcomer cannot act on. Every package in the lock file that has one
// is decided here, allowed (true) or denied (false), so a fresh `npm ci` prints no such warning.

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
});
