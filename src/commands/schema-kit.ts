import { z } from 'zod';
import { UUID } from '../cloud/rules.js';
import { type ArgReader, MAX_PAGE, PAGE_FLAG } from './arg-reader.js';
import type { Need } from './spec.js';
import {
  checkLabelKey,
  checkLabelValue,
  checkName,
  checkTagKey,
  checkTagValue,
  LABEL_KEY_RULE,
  LABEL_VALUE_RULE,
  MAX_RANGE_SECONDS,
  MIN_RANGE_SECONDS,
  NAME_RULE,
  TAG_KEY_RULE,
  TAG_VALUE_RULE,
} from './value-rules.js';

// The zod pieces command schemas are built from, each carrying the rule a person is told.

export const ruled = (check: (v: string) => string | null, rule: string) =>
  z.string().refine((v) => check(v) === null, { error: rule });

export const name = ruled(checkName, NAME_RULE);
export const count = (max: number) => z.number().int().min(1).max(max);
export const range = z.number().int().min(MIN_RANGE_SECONDS).max(MAX_RANGE_SECONDS);
export const tags = z.record(ruled(checkTagKey, TAG_KEY_RULE), ruled(checkTagValue, TAG_VALUE_RULE));
export const labelMap = z.record(
  ruled(checkLabelKey, LABEL_KEY_RULE),
  ruled(checkLabelValue, LABEL_VALUE_RULE),
);

/** A command with no arguments. */
export const simple = <K extends string>(kind: K) => z.object({ kind: z.literal(kind) });

/** The page of a paged list, 1 for the first; absent means the first. */
export const page = z.number().int().min(1).max(MAX_PAGE).optional();

/** A list without arguments but `--page N`. */
export const paged = <K extends string>(kind: K) => z.object({ kind: z.literal(kind), page });

/** The parser of a list that takes only `--page N`. */
export const pagedNoArgs =
  <K extends string>(kind: K) =>
  (r: ArgReader): { kind: K; page?: number } => {
    const a = r.args(PAGE_FLAG);
    r.noMore(a, 0);
    return { kind, ...r.page(a) };
  };

/** A command whose one argument is a name or id in `field`. */
export const onName = <K extends string, F extends string>(kind: K, field: F) =>
  z.object({ kind: z.literal(kind), ...({ [field]: name } as Record<F, typeof name>) });

/** A command typed without arguments, which opens its form. */
export const modal = <K extends string>(kind: K) =>
  z.object({ kind: z.literal(kind), modal: z.literal(true) });

export const isId = (ref: string): boolean => UUID.test(ref);

/** The lookup a name (not an id) needs: the listing that maps it to an id. */
export function lookupNeed(ref: string, requirement: Need['requirement'], what: string): Need[] {
  return isId(ref) ? [] : [{ requirement, hint: `Give the ${what} id instead of its name.` }];
}

/** The parser of a command that takes no arguments. */
export const noArgs =
  <K extends string>(kind: K) =>
  (r: ArgReader): { kind: K } => {
    r.nothing();
    return { kind };
  };
