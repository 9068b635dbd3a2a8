import { USERNAME } from '../../cloud/rules.js';

// A Slurm login name from a Slack profile. Slack names are free text (accents, emoji, scripts other
// than Latin, pronouns in brackets); Slurm wants a POSIX name (src/cloud/rules.ts USERNAME:
// ^[a-z_][a-z0-9_-]{0,31}$). Pure, so every rule here is unit-tested.

export const MAX_USERNAME_LENGTH = 32;

// Letters NFKD does not take apart into a base letter and a mark.
const LATIN: Record<string, string> = {
  ß: 'ss',
  æ: 'ae',
  œ: 'oe',
  ø: 'o',
  đ: 'd',
  ð: 'd',
  þ: 'th',
  ł: 'l',
  ı: 'i',
  ħ: 'h',
  ŋ: 'ng',
  ŧ: 't',
  ſ: 's',
};

// Common romanisations of Cyrillic and Greek, so "Дмитрий" still yields a name.
const CYRILLIC: Record<string, string> = {
  а: 'a',
  б: 'b',
  в: 'v',
  г: 'g',
  ґ: 'g',
  д: 'd',
  е: 'e',
  ё: 'e',
  є: 'ye',
  ж: 'zh',
  з: 'z',
  и: 'i',
  і: 'i',
  ї: 'yi',
  й: 'y',
  к: 'k',
  л: 'l',
  м: 'm',
  н: 'n',
  о: 'o',
  п: 'p',
  р: 'r',
  с: 's',
  т: 't',
  у: 'u',
  ф: 'f',
  х: 'kh',
  ц: 'ts',
  ч: 'ch',
  ш: 'sh',
  щ: 'shch',
  ъ: '',
  ы: 'y',
  ь: '',
  э: 'e',
  ю: 'yu',
  я: 'ya',
};
const GREEK: Record<string, string> = {
  α: 'a',
  β: 'v',
  γ: 'g',
  δ: 'd',
  ε: 'e',
  ζ: 'z',
  η: 'i',
  θ: 'th',
  ι: 'i',
  κ: 'k',
  λ: 'l',
  μ: 'm',
  ν: 'n',
  ξ: 'x',
  ο: 'o',
  π: 'p',
  ρ: 'r',
  σ: 's',
  ς: 's',
  τ: 't',
  υ: 'y',
  φ: 'f',
  χ: 'ch',
  ψ: 'ps',
  ω: 'o',
};

const APOSTROPHES = new Set(["'", '’', '‘', '`', 'ʼ']);

/**
 * The POSIX username a display name gives, or undefined when nothing usable is left (a name written
 * only in scripts we do not romanise, or only emoji). Words become `_`-separated, hyphens stay,
 * apostrophes vanish (O'Brien → obrien), bracketed parts such as pronouns are dropped, a name starting
 * with a digit gets a `u` in front, and the result is cut to 32 characters.
 */
export function posixUsername(text: string): string | undefined {
  // Cyrillic first, before NFKD splits й into и and a breve.
  const lowered = [
    ...text
      .replace(/\([^)]*\)|\[[^\]]*\]|\{[^}]*\}/g, ' ')
      .normalize('NFC')
      .toLowerCase(),
  ]
    .map((ch) => CYRILLIC[ch] ?? ch)
    .join('');
  const plain = lowered.normalize('NFKD').replace(/\p{M}+/gu, '');
  let out = '';
  for (const ch of plain) {
    if (/[a-z0-9]/.test(ch)) out += ch;
    else if (ch === '-') out += '-';
    else if (APOSTROPHES.has(ch)) continue;
    else {
      const roman = LATIN[ch] ?? GREEK[ch];
      // Anything else (spaces, dots, emoji, other scripts, punctuation) separates words.
      out += roman ?? '_';
    }
  }
  let name = out.replace(/[-_]{2,}/g, (run) => (run.includes('_') ? '_' : '-')).replace(/^[-_]+|[-_]+$/g, '');
  if (name === '') return undefined;
  if (/^[0-9]/.test(name)) name = `u${name}`;
  name = name.slice(0, MAX_USERNAME_LENGTH).replace(/[-_]+$/, '');
  return USERNAME.test(name) ? name : undefined;
}

/** The parts of a Slack `users.info` user this reads. */
export interface SlackUserNames {
  readonly name?: string | undefined;
  readonly real_name?: string | undefined;
  readonly profile?:
    | {
        readonly display_name?: string | undefined;
        readonly real_name?: string | undefined;
      }
    | undefined;
}

/**
 * The username for a Slack user: from the display name, else the real name, else the account name —
 * the first of them that gives a usable name — or undefined when none does.
 */
export function usernameFromSlackUser(user: SlackUserNames): string | undefined {
  const candidates = [user.profile?.display_name, user.profile?.real_name, user.real_name, user.name];
  for (const candidate of candidates) {
    if (!candidate?.trim()) continue;
    const name = posixUsername(candidate);
    if (name) return name;
  }
  return undefined;
}
