import { generateKeyPairSync } from 'node:crypto';

// Real OpenSSH public keys built from freshly generated key pairs (no fixtures to go stale).

function sshString(data: Buffer | string): Buffer {
  const buf = typeof data === 'string' ? Buffer.from(data, 'latin1') : data;
  const len = Buffer.alloc(4);
  len.writeUInt32BE(buf.length);
  return Buffer.concat([len, buf]);
}

/** An SSH mpint: big-endian, with a leading zero byte when the high bit is set. */
function mpint(bytes: Buffer): Buffer {
  const v = (bytes[0] ?? 0) & 0x80 ? Buffer.concat([Buffer.from([0]), bytes]) : bytes;
  return sshString(v);
}

export function ed25519PublicKey(comment = 'alice@laptop'): string {
  const { publicKey } = generateKeyPairSync('ed25519');
  const x = Buffer.from(publicKey.export({ format: 'jwk' }).x!, 'base64url');
  const blob = Buffer.concat([sshString('ssh-ed25519'), sshString(x)]);
  return `ssh-ed25519 ${blob.toString('base64')} ${comment}`;
}

export function rsaPublicKey(comment = 'bob@desk'): string {
  const { publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const jwk = publicKey.export({ format: 'jwk' });
  const blob = Buffer.concat([
    sshString('ssh-rsa'),
    mpint(Buffer.from(jwk.e!, 'base64url')),
    mpint(Buffer.from(jwk.n!, 'base64url')),
  ]);
  return `ssh-rsa ${blob.toString('base64')} ${comment}`;
}

/** An ed25519 blob labelled as ssh-rsa: the type check must catch it. */
export function mislabelledKey(): string {
  return ed25519PublicKey().replace(/^ssh-ed25519/, 'ssh-rsa');
}
