import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { keyLine, shortKey, sshKeyFingerprint } from '../../src/render/ssh-keys.js';
import { ed25519PublicKey, rsaPublicKey } from '../cloud/ssh-key-fixtures.js';

/** ssh-keygen is the reference the fingerprints are checked against: missing, the test fails (never skips). */
function sshKeygen(args: readonly string[]): string {
  try {
    return execFileSync('ssh-keygen', args, { encoding: 'utf8' });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') {
      throw new Error(
        'ssh-keygen is missing: install it (Debian: apt-get install openssh-client); .ci/run does',
      );
    }
    throw err;
  }
}

describe('SSH keys as a list shows them', () => {
  it('fingerprints a key exactly as ssh-keygen -lf does', () => {
    const dir = mkdtempSync(join(tmpdir(), 'gpuops-keys-'));
    try {
      for (const key of [ed25519PublicKey(), rsaPublicKey()]) {
        const file = join(dir, 'key.pub');
        writeFileSync(file, `${key}\n`);
        const printed = sshKeygen(['-lf', file]).split(' ')[1];
        expect(sshKeyFingerprint(key)).toBe(printed);
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('never shows the key data, and leaves the comment out when asked', () => {
    const key = ed25519PublicKey('ada@example.com');
    const blob = key.split(' ')[1]!;
    expect(shortKey(key)).toMatch(/^ssh-ed25519 SHA256:[A-Za-z0-9+/]{43} ada@example\.com$/);
    expect(shortKey(key, false)).not.toContain('ada@example.com');
    expect(keyLine({ name: 'laptop', publicKey: key, ownerId: 'U0ADA' })).not.toContain(blob);
    expect(keyLine({ name: 'x', publicKey: null })).toBe(
      ':key: *x* · `key not shown by the API` · owner unknown',
    );
  });
});
