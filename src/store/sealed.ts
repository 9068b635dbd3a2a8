import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';

// Secrets typed into forms (cloud-init user data, a kubeconfig) must reach a worker without ever
// sitting in job data, logs or Slack. The listener seals the text with AES-256-GCM into Redis under a
// random id that lives a day; the job carries only `{ sealedRef: id }`; the worker unseals it and
// discards it once the job has ended.

export const SEALED_TTL_SECONDS = 24 * 3600;
/** Ids are 24 base64url characters (18 random bytes): unguessable, and free of ':' for Redis keys. */
export const SEALED_REF = /^[A-Za-z0-9_-]{24}$/;

export interface SealedRef {
  readonly sealedRef: string;
}

export interface Sealer {
  /** Encrypts `plaintext` into Redis for `ttlSeconds` (default a day) and returns its reference. */
  seal(plaintext: string, ttlSeconds?: number): Promise<SealedRef>;
  /** The plaintext, or undefined when it expired, was discarded, or was sealed under another key. */
  unseal(ref: SealedRef): Promise<string | undefined>;
  /** Deletes the sealed value; deleting one already gone is not an error. */
  discard(ref: SealedRef): Promise<void>;
}

const VERSION = 'v1';

/**
 * The sealing key: GPUOPS_SEAL_KEY when set (64 hex digits or base64 of 32 bytes), else derived from
 * the bot token with HKDF-SHA256. Deriving it means a deployment needs no extra secret, at the price
 * that rotating the bot token makes values sealed before the rotation unreadable (their jobs fail
 * with a clear "send the form again").
 */
export function sealKeyFrom(settings: {
  readonly GPUOPS_SEAL_KEY?: string | undefined;
  readonly SLACK_BOT_TOKEN?: string | undefined;
}): Buffer {
  const given = settings.GPUOPS_SEAL_KEY;
  if (given) {
    const key = /^[0-9a-fA-F]{64}$/.test(given) ? Buffer.from(given, 'hex') : Buffer.from(given, 'base64');
    if (key.length !== 32) throw new Error('GPUOPS_SEAL_KEY must be 32 bytes (64 hex digits or base64).');
    return key;
  }
  const token = settings.SLACK_BOT_TOKEN;
  if (!token) throw new Error('GPUOPS_SEAL_KEY or SLACK_BOT_TOKEN is needed to seal form secrets.');
  return Buffer.from(hkdfSync('sha256', token, 'gpuops-sealed-values', 'aes-256-gcm v1', 32));
}

/** The start-up warning when the sealing key is derived from the bot token, else undefined. */
export function sealKeyWarning(settings: {
  readonly GPUOPS_SEAL_KEY?: string | undefined;
}): string | undefined {
  if (settings.GPUOPS_SEAL_KEY) return undefined;
  return 'GPUOPS_SEAL_KEY is not set, so form secrets (cloud-init user data, kubeconfigs) are sealed in Redis with a key derived from the bot token: whoever holds the token and reads Redis can open them, and rotating the token voids the ones still waiting. Set GPUOPS_SEAL_KEY to 32 random bytes (openssl rand -hex 32), the same in every process (docs/operations.md).';
}

/** Seals under `prefix:sealed:<id>`, with the id as associated data so a value cannot be moved. */
export function createSealer(redis: Redis, prefix: string, key: Buffer): Sealer {
  if (key.length !== 32) throw new Error('the sealing key must be 32 bytes');
  const keyOf = (id: string) => `${prefix}:sealed:${id}`;
  const valid = (ref: SealedRef) => typeof ref?.sealedRef === 'string' && SEALED_REF.test(ref.sealedRef);

  return {
    async seal(plaintext, ttlSeconds = SEALED_TTL_SECONDS) {
      const id = randomBytes(18).toString('base64url');
      const iv = randomBytes(12);
      const cipher = createCipheriv('aes-256-gcm', key, iv);
      cipher.setAAD(Buffer.from(id));
      const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
      const sealed = [VERSION, iv, cipher.getAuthTag(), body]
        .map((part) => (typeof part === 'string' ? part : part.toString('base64url')))
        .join('.');
      await redis.set(keyOf(id), sealed, 'EX', Math.max(1, Math.floor(ttlSeconds)));
      return { sealedRef: id };
    },

    async unseal(ref) {
      if (!valid(ref)) return undefined;
      const stored = await redis.get(keyOf(ref.sealedRef));
      if (stored === null) return undefined;
      const [version, iv, tag, body] = stored.split('.');
      if (version !== VERSION || iv === undefined || tag === undefined || body === undefined)
        return undefined;
      try {
        const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64url'));
        decipher.setAAD(Buffer.from(ref.sealedRef));
        decipher.setAuthTag(Buffer.from(tag, 'base64url'));
        return Buffer.concat([decipher.update(Buffer.from(body, 'base64url')), decipher.final()]).toString(
          'utf8',
        );
      } catch {
        // Another key (a rotated bot token) or tampering: as good as gone.
        return undefined;
      }
    },

    async discard(ref) {
      if (!valid(ref)) return;
      await redis.del(keyOf(ref.sealedRef));
    },
  };
}
