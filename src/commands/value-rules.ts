import { checkTagKey, TAG_KEY_RULE } from '../cloud/rules.js';
import { MAX_RANGE_SECONDS, MIN_RANGE_SECONDS, RANGE_RULE } from '../metrics/range-rule.js';

// Value rules of the /gpu grammar that need no I/O. Each check returns null when the value passes, or
// the rule it broke in words, so the parser and the zod schemas share one wording.

/** Resource names and references (instances, clusters, pools, keys, filesystems, instance types). */
export const NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$/;
export const NAME_RULE =
  'a name has 1 to 63 characters (letters, digits, . _ -) and starts with a letter or digit';
export function checkName(value: string): string | null {
  return NAME.test(value) ? null : NAME_RULE;
}

export const MAX_COUNT = 1000;
export const MAX_WAITLIST_COUNT = 64;
export const MAX_AUDIT = 500;
export const DEFAULT_AUDIT = 20;

/** Whole number in 1..max, written in plain digits (no sign, no exponent, no decimals); `noun` names it in the rule. */
export function parseCount(value: string, max: number, noun = 'count'): number | string {
  const rule = `a ${noun} is a whole number from 1 to ${max}`;
  if (!/^[0-9]{1,7}$/.test(value)) return rule;
  const n = Number(value);
  return n >= 1 && n <= max ? n : rule;
}

export const DURATION_UNITS = { s: 1, m: 60, h: 3600, d: 86_400, w: 604_800 } as const;
export const DEFAULT_RANGE_SECONDS = 3600;
export { MAX_RANGE_SECONDS, MIN_RANGE_SECONDS, RANGE_RULE };

/** Parses 15m, 6h, 7d or 1h30m (Prometheus style) into seconds, within 1m..30d. */
export function parseDuration(value: string): number | string {
  const text = value.trim().toLowerCase();
  if (!/^(?:[0-9]{1,7}[smhdw])+$/.test(text)) return RANGE_RULE;
  let seconds = 0;
  for (const m of text.matchAll(/([0-9]+)([smhdw])/g)) {
    seconds += Number(m[1]) * DURATION_UNITS[m[2] as keyof typeof DURATION_UNITS];
  }
  return seconds >= MIN_RANGE_SECONDS && seconds <= MAX_RANGE_SECONDS ? seconds : RANGE_RULE;
}

export const TAG_VALUE_MAX = 255;
export const TAG_VALUE_RULE = `a tag value has at most ${TAG_VALUE_MAX} characters`;
export function checkTagValue(value: string): string | null {
  return value.length <= TAG_VALUE_MAX ? null : TAG_VALUE_RULE;
}
export { checkTagKey, TAG_KEY_RULE };

// Kubernetes label keys may carry a DNS prefix (the spec's own example is service.io/metrics-enabled);
// the part after the slash follows the tag-key rule.
const DNS_SUBDOMAIN =
  /^(?=.{1,253}$)[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)*$/;
export const LABEL_KEY_RULE =
  'a label key is an optional DNS prefix and a slash (like service.io/) and then a name of 1 to 63 characters that starts and ends with a letter or digit and may contain - _ . inside';
export function checkLabelKey(key: string): string | null {
  const slash = key.lastIndexOf('/');
  if (slash === -1) return checkTagKey(key) === null ? null : LABEL_KEY_RULE;
  const prefix = key.slice(0, slash);
  const name = key.slice(slash + 1);
  return DNS_SUBDOMAIN.test(prefix) && checkTagKey(name) === null ? null : LABEL_KEY_RULE;
}

export const LABEL_VALUE = /^(?:[A-Za-z0-9](?:[A-Za-z0-9._-]{0,61}[A-Za-z0-9])?)?$/;
export const LABEL_VALUE_RULE =
  'a label value is empty or up to 63 characters that start and end with a letter or digit and may contain - _ . inside';
export function checkLabelValue(value: string): string | null {
  return LABEL_VALUE.test(value) ? null : LABEL_VALUE_RULE;
}

export const PROMQL_MAX = 2000;
export const PROMQL_RULE = `a PromQL expression of 1 to ${PROMQL_MAX} characters`;
export function checkPromql(value: string): string | null {
  return value.trim().length > 0 && value.length <= PROMQL_MAX ? null : PROMQL_RULE;
}

/** Two-valued words accepted for on/off arguments. */
export const ON_OFF = ['on', 'off'] as const;
export type OnOff = (typeof ON_OFF)[number];
