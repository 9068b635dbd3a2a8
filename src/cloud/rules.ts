// The spec's input rules, as pure checks shared by the client (before sending) and the simulator
// (when receiving). Each returns null when the value passes, or the rule it broke in words.

/** Tag key: 1–63 characters, starting and ending alphanumeric; inside also '-', '_', '.' (our choice). */
export const TAG_KEY = /^[A-Za-z0-9](?:[A-Za-z0-9._-]{0,61}[A-Za-z0-9])?$/;
export const TAG_KEY_RULE =
  'a tag key has 1 to 63 characters, starts and ends with a letter or digit, and may contain - _ . inside';
export function checkTagKey(key: string): string | null {
  return TAG_KEY.test(key) ? null : TAG_KEY_RULE;
}

/** Kubernetes version, as the spec's update request states it. */
export const K8S_VERSION = /^v([0-9]+)\.([0-9]+)(\.([0-9]+))?$/;
export const K8S_VERSION_RULE =
  'a version looks like v1.31 or v1.31.2: v, then major.minor and an optional patch';
export function checkK8sVersion(version: string): string | null {
  return K8S_VERSION.test(version) ? null : K8S_VERSION_RULE;
}

export const DEFAULT_POD_CIDR = '10.233.0.0/18';
export const DEFAULT_SERVICE_CIDR = '10.233.64.0/18';
export const CIDR_RULE = 'an IPv4 CIDR block such as 10.233.0.0/18 (four octets 0–255, prefix 0–32)';
export function checkCidr(value: string): string | null {
  const m = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})\/(\d{1,2})$/.exec(value);
  if (!m) return CIDR_RULE;
  const octets = m.slice(1, 5).map(Number);
  const prefix = Number(m[5]);
  if (octets.some((o) => o > 255) || prefix > 32) return CIDR_RULE;
  return null;
}

/** Image references are sent as image://<name>; responses carry the bare name. */
export const IMAGE_PREFIX = 'image://';
export const DEFAULT_IMAGE = 'image://ubuntu22.04';
export const IMAGE_RULE = 'an image reference looks like image://ubuntu22.04 (letters, digits, . _ - / :)';
export function checkImageRef(value: string): string | null {
  if (!value.startsWith(IMAGE_PREFIX)) return IMAGE_RULE;
  return /^[A-Za-z0-9][A-Za-z0-9._/:-]{0,127}$/.test(value.slice(IMAGE_PREFIX.length)) ? null : IMAGE_RULE;
}
/** Accepts a bare name or a full reference and returns the full reference. */
export function toImageRef(value: string): string {
  return value.startsWith(IMAGE_PREFIX) ? value : `${IMAGE_PREFIX}${value}`;
}

export const BASE64_RULE =
  'user data must be base64 (A–Z a–z 0–9 + / with = padding, length a multiple of 4)';
export function checkBase64(value: string): string | null {
  return value.length % 4 === 0 && /^[A-Za-z0-9+/]*={0,2}$/.test(value) ? null : BASE64_RULE;
}

/**
 * Filesystem size: a positive whole number with a unit, e.g. 512Gi, 1Ti, 500GB (our grammar: the
 * spec says "a size in GB" whose values "carry a unit suffix"; the reference's example is 512Gi).
 */
export const SIZE = /^([1-9][0-9]{0,6})(Gi|Ti|G|T|GB|TB)$/;
export const SIZE_RULE = 'a size is a whole number with a unit: Gi, Ti, G, T, GB or TB (e.g. 512Gi)';
export function checkSize(value: string): string | null {
  return SIZE.test(value) ? null : SIZE_RULE;
}

export const SSH_KEY_TYPES = [
  'ssh-rsa',
  'ssh-dss',
  'ssh-ed25519',
  'ecdsa-sha2-nistp256',
  'ecdsa-sha2-nistp384',
  'ecdsa-sha2-nistp521',
] as const;
export type SshKeyType = (typeof SSH_KEY_TYPES)[number];
export const SSH_KEY_RULE = `an OpenSSH public key is one line "<type> <base64> [comment]", its type one of ${SSH_KEY_TYPES.join(', ')}`;

/** What to do about a public key that does not parse: the next step, for a person. */
export const PASTE_KEY =
  'paste the one line of your .pub file (such as ~/.ssh/id_ed25519.pub), never the private key';

export interface ParsedSshKey {
  readonly type: SshKeyType;
  readonly blob: string;
  readonly comment: string;
}

/**
 * Parses an OpenSSH public key and checks that the type named in front matches the one embedded in
 * the key blob (the blob starts with a length-prefixed type string), so a pasted key cannot claim to
 * be ed25519 while carrying something else.
 */
export function parseSshPublicKey(text: string): ParsedSshKey | string {
  const parts = text.trim().split(/\s+/);
  if (parts.length < 2) return `it is ${parts.length === 0 ? 'empty' : 'one word'}, and ${SSH_KEY_RULE}`;
  const [type, blob, ...rest] = parts as [string, string, ...string[]];
  if (!(SSH_KEY_TYPES as readonly string[]).includes(type)) {
    return `key type "${type.slice(0, 40)}" is not accepted; use one of ${SSH_KEY_TYPES.join(', ')}`;
  }
  if (checkBase64(blob) !== null) return 'the key data (second word) is not valid base64';
  const bytes = Buffer.from(blob, 'base64');
  if (bytes.length < 4) return 'the key data is too short to be a key';
  const len = bytes.readUInt32BE(0);
  if (len === 0 || len > 64 || bytes.length < 4 + len) return 'the key data does not start with a key type';
  const embedded = bytes.subarray(4, 4 + len).toString('latin1');
  if (embedded !== type) {
    return `the key says "${type}" but its data is a "${embedded.replace(/[^\x20-\x7e]/g, '?').slice(0, 40)}" key`;
  }
  const minimum: Record<SshKeyType, number> = {
    'ssh-rsa': 4 + len + 4 + 1 + 4 + 64,
    'ssh-dss': 4 + len + 4 * 4 + 64,
    'ssh-ed25519': 4 + len + 4 + 32,
    'ecdsa-sha2-nistp256': 4 + len + 4 + 8 + 4 + 65,
    'ecdsa-sha2-nistp384': 4 + len + 4 + 8 + 4 + 97,
    'ecdsa-sha2-nistp521': 4 + len + 4 + 8 + 4 + 133,
  };
  if (bytes.length < minimum[type as SshKeyType]) return `the ${type} key data is truncated`;
  return { type: type as SshKeyType, blob, comment: rest.join(' ') };
}

export function checkSshPublicKey(text: string): string | null {
  const parsed = parseSshPublicKey(text);
  return typeof parsed === 'string' ? parsed : null;
}

/** POSIX user name for Slurm users (our rule: what useradd accepts by default on Debian). */
export const USERNAME = /^[a-z_][a-z0-9_-]{0,31}$/;
export const USERNAME_RULE =
  'a username starts with a lowercase letter or _, then lowercase letters, digits, _ or -, 32 characters at most';
export function checkUsername(value: string): string | null {
  return USERNAME.test(value) ? null : USERNAME_RULE;
}

export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
