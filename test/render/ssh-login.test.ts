import { describe, expect, it } from 'vitest';
import { sshKeyFingerprint } from '../../src/render/ssh-keys.js';
import { loginUserFor, sshLoginText } from '../../src/render/ssh-login.js';
import { ed25519PublicKey } from '../cloud/ssh-key-fixtures.js';

// The login line people copy: the user the policy names and the key gpuops can vouch for.

const login = { defaultUser: 'ubuntu', byType: { 'cpu.16x': 'admin' }, byImage: { rocky9: 'rocky' } };

describe('the login line', () => {
  it('takes the user from the image first, then the type, then the default', () => {
    expect(loginUserFor(login, { type: 'cpu.16x', image: 'rocky9' })).toBe('rocky');
    expect(loginUserFor(login, { type: 'cpu.16x', image: 'ubuntu22.04' })).toBe('admin');
    expect(loginUserFor(login, { type: 'h100-hgx-80gb.1x' })).toBe('ubuntu');
    expect(loginUserFor(undefined, { type: 'cpu.16x' })).toBe('ubuntu');
  });

  it('names the key the machine was made with over the person’s own keys', () => {
    const key = ed25519PublicKey('ops@example.com');
    expect(sshLoginText('ubuntu', '10.0.0.1', { madeWith: { name: 'ops', publicKey: key }, own: [] })).toBe(
      `:key: Log in: \`ssh ubuntu@10.0.0.1\` with the SSH key *ops* (\`ssh-ed25519 ${sshKeyFingerprint(key)}\`) it was made with.`,
    );
    expect(sshLoginText('ubuntu', '10.0.0.1', { madeWith: { name: 'ops' }, own: [] })).toBe(
      ':key: Log in: `ssh ubuntu@10.0.0.1` with the SSH key *ops* it was made with.',
    );
  });

  it('lists a few of several keys, and says nothing of keys it could not read', () => {
    const own = ['a', 'b', 'c', 'd', 'e'].map((name) => ({ name }));
    expect(sshLoginText('root', '10.0.0.2', { own })).toBe(
      ':key: Log in: `ssh root@10.0.0.2` with one of your SSH keys: *a*, *b*, *c* and 2 more.',
    );
    expect(sshLoginText('root', '10.0.0.2', undefined)).toBe(':key: Log in: `ssh root@10.0.0.2`.');
  });
});
