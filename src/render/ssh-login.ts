import { escapeText } from './job-message.js';
import { shortKey } from './ssh-keys.js';

// How to log in to a machine, as one line: `ssh <user>@<address>` and the key to use. The user comes
// from the policy's `login` (per image, then per type, then its default); the key is the one the
// machine was made with when gpuops knows it, else the person's own keys added through gpuops.

/** The policy's `login` section (docs/policy.md), normalised. */
export interface LoginUsers {
  readonly defaultUser: string;
  readonly byType: Readonly<Record<string, string>>;
  readonly byImage: Readonly<Record<string, string>>;
}

/** The user of the cloud's default Ubuntu images, when the policy names none. */
export const DEFAULT_LOGIN_USER = 'ubuntu';

/** The user to log in as: the image decides first (it holds the OS), then the type, then the default. */
export function loginUserFor(
  login: LoginUsers | undefined,
  machine: { readonly type?: string | undefined; readonly image?: string | undefined },
): string {
  const byImage = machine.image !== undefined ? login?.byImage[machine.image] : undefined;
  const byType = machine.type !== undefined ? login?.byType[machine.type] : undefined;
  return byImage ?? byType ?? login?.defaultUser ?? DEFAULT_LOGIN_USER;
}

export interface LoginKey {
  readonly name: string;
  readonly publicKey?: string | null | undefined;
}

/** The key to name: the machine's own when known, else the person's; neither → how to add one. */
export interface LoginKeys {
  readonly madeWith?: LoginKey | undefined;
  readonly own: readonly LoginKey[];
}

const SHOWN_KEYS = 3;

function keyText(key: LoginKey): string {
  // The comment of a key is often an e-mail address: these lines can be seen by a whole channel.
  const short = key.publicKey ? ` (\`${escapeText(shortKey(key.publicKey, false))}\`)` : '';
  return `*${escapeText(key.name)}*${short}`;
}

/** The ssh command alone, as a person types it. */
export function sshCommand(user: string, ip: string): string {
  return `ssh ${user}@${ip}`;
}

/**
 * The end of a login line: which key to use, or how to add one when gpuops knows none (undefined: the
 * keys could not be read, so nothing is said about them).
 */
export function keyAdvice(keys: LoginKeys | undefined): string {
  if (!keys) return '.';
  if (keys.madeWith) return ` with the SSH key ${keyText(keys.madeWith)} it was made with.`;
  const own = keys.own;
  if (own.length === 1) return ` with your SSH key ${keyText(own[0]!)}.`;
  if (own.length > 1) {
    const names = own.slice(0, SHOWN_KEYS).map((k) => `*${escapeText(k.name)}*`);
    const more = own.length > SHOWN_KEYS ? ` and ${own.length - SHOWN_KEYS} more` : '';
    return ` with one of your SSH keys: ${names.join(', ')}${more}.`;
  }
  return '. gpuops knows no SSH key of yours: add your public key to the account with `/gpu keys add <name> <public key>`.';
}

/** One mrkdwn line: the command and the key to use, or how to add a key when gpuops knows none. */
export function sshLoginText(user: string, ip: string, keys: LoginKeys | undefined): string {
  return `:key: Log in: \`${escapeText(sshCommand(user, ip))}\`${keyAdvice(keys)}`;
}
