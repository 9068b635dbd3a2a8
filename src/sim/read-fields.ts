import { SimError, SimErrorKind } from './sim-error.js';

// Readers for JSON request bodies: each returns the typed value or throws a SimError naming the field
// and the rule, e.g. `count: must be a whole number of at least 1; got "3"`.

export type Fields = Record<string, unknown>;

const show = (value: unknown): string => {
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 60 ? `${text.slice(0, 57)}...` : text;
};

export function invalid(field: string, rule: string): SimError {
  return new SimError(SimErrorKind.Invalid, `${field}: ${rule}`, field);
}

export function asFields(body: unknown): Fields {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) {
    throw invalid('body', 'the request body must be a JSON object');
  }
  return body as Fields;
}

export function requiredString(o: Fields, field: string, hint = 'a non-empty string'): string {
  const v = o[field];
  if (v === undefined || v === null) throw invalid(field, `is required (${hint})`);
  if (typeof v !== 'string' || v.trim() === '') throw invalid(field, `must be ${hint}; got ${show(v)}`);
  return v;
}

export function optionalString(o: Fields, field: string, hint = 'a string'): string | undefined {
  const v = o[field];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'string') throw invalid(field, `must be ${hint}; got ${show(v)}`);
  return v;
}

export function optionalBoolean(o: Fields, field: string): boolean | undefined {
  const v = o[field];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'boolean') throw invalid(field, `must be true or false; got ${show(v)}`);
  return v;
}

export function requiredInteger(o: Fields, field: string, min: number, max: number): number {
  const v = o[field];
  if (v === undefined || v === null)
    throw invalid(field, `is required (a whole number from ${min} to ${max})`);
  if (typeof v !== 'number' || !Number.isInteger(v) || v < min || v > max) {
    throw invalid(field, `must be a whole number from ${min} to ${max}; got ${show(v)}`);
  }
  return v;
}

/** An object of string values; `checkKey` returns the broken rule for a bad key, or null. */
export function optionalStringMap(
  o: Fields,
  field: string,
  checkKey?: (key: string) => string | null,
): Record<string, string> | undefined {
  const v = o[field];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'object' || Array.isArray(v)) {
    throw invalid(field, `must be an object of string keys to string values; got ${show(v)}`);
  }
  const out: Record<string, string> = {};
  for (const [key, value] of Object.entries(v as Fields)) {
    const broken = checkKey?.(key) ?? null;
    if (broken) throw invalid(field, `key ${show(key)} is not allowed: ${broken}`);
    if (typeof value !== 'string')
      throw invalid(field, `the value of ${show(key)} must be a string; got ${show(value)}`);
    out[key] = value;
  }
  return out;
}

export function optionalStringArray(o: Fields, field: string, hint: string): string[] | undefined {
  const v = o[field];
  if (v === undefined || v === null) return undefined;
  if (!Array.isArray(v) || v.some((x) => typeof x !== 'string')) {
    throw invalid(field, `must be an array of ${hint}; got ${show(v)}`);
  }
  return v as string[];
}

export function requiredStringArray(o: Fields, field: string, hint: string): string[] {
  const v = optionalStringArray(o, field, hint);
  if (v === undefined) throw invalid(field, `is required (an array of ${hint})`);
  return v;
}

/** Applies a rule from src/cloud/rules.ts to a present value. */
export function check(field: string, value: string, rule: (v: string) => string | null): void {
  const broken = rule(value);
  if (broken) throw invalid(field, `${show(value)} is not valid: ${broken}`);
}
