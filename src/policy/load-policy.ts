import { readFile } from 'node:fs/promises';
import { isMap, isScalar, isSeq, LineCounter, type Node, parseDocument } from 'yaml';
import {
  ZodArray,
  ZodDefault,
  ZodEnum,
  ZodObject,
  ZodOptional,
  ZodPipe,
  ZodPrefault,
  ZodRecord,
  type z,
} from 'zod';
import { AppError, ErrorCode } from '../errors.js';
import { DEFAULT_POLICY, type Policy, toPolicy } from './policy.js';
import { policyFileSchema } from './policy-schema.js';

// Reads the policy file and says exactly where it is wrong: every problem carries the file's line and
// column, found by walking the YAML nodes along the failing zod path. An invalid file stops start-up.

export interface PolicyProblem {
  /** Dotted path of the setting, e.g. `approvals.threshold_per_hour`; empty for the whole file. */
  readonly at: string;
  /** 1-based line and column in the file. */
  readonly line: number;
  readonly column: number;
  /** The rule that failed, in words. */
  readonly rule: string;
}

export class PolicyError extends AppError {
  readonly file: string;
  readonly problems: readonly PolicyProblem[];
  constructor(file: string, problems: readonly PolicyProblem[], options?: { cause?: unknown }) {
    const first = problems[0];
    const where = (p: PolicyProblem) => `line ${p.line}, column ${p.column}${p.at ? ` (${p.at})` : ''}`;
    const head = first
      ? `The policy file ${file} is invalid at ${where(first)}: ${first.rule}.`
      : `The policy file ${file} is invalid.`;
    const more = problems.slice(1).map((p) => `\n  also at ${where(p)}: ${p.rule}.`);
    super(ErrorCode.Config, `${head}${more.join('')}\nFix it and start again (see docs/policy.md).`, options);
    this.file = file;
    this.problems = problems;
  }
  get line(): number {
    return this.problems[0]?.line ?? 1;
  }
  get column(): number {
    return this.problems[0]?.column ?? 1;
  }
  get rule(): string {
    return this.problems[0]?.rule ?? '';
  }
}

/** Parses policy YAML text; `file` names it in errors. Throws PolicyError with line and rule. */
export function parsePolicy(text: string, file = 'policy.yaml'): Policy {
  const lineCounter = new LineCounter();
  const doc = parseDocument(text, { lineCounter, prettyErrors: true, uniqueKeys: true });
  const pos = (offset: number) => lineCounter.linePos(offset);
  if (doc.errors.length > 0) {
    throw new PolicyError(
      file,
      doc.errors.map((err) => {
        const at = err.linePos?.[0] ?? pos(err.pos[0]);
        const what = err.message.split('\n')[0]?.replace(/ at line \d+, column \d+:?$/, '') ?? err.code;
        return { at: '', line: at.line, column: at.col, rule: `YAML syntax: ${what}` };
      }),
    );
  }
  // An empty file is a file that changes nothing.
  const data: unknown = doc.contents === null ? {} : doc.toJS();
  const result = policyFileSchema.safeParse(data ?? {}, { reportInput: true });
  if (result.success) return toPolicy(result.data, file);

  const problems = result.error.issues.flatMap((issue): PolicyProblem[] => {
    const path = issue.path.filter((p): p is string | number => typeof p !== 'symbol');
    if (issue.code === 'unrecognized_keys') {
      return issue.keys.map((key) => {
        const offset = locate(doc.contents, [...path, key], true);
        const { line, col } = pos(offset);
        return { at: dotted([...path, key]), line, column: col, rule: unknownKeyRule(path, key) };
      });
    }
    const { line, col } = pos(locate(doc.contents, path, false));
    return [{ at: dotted(path), line, column: col, rule: ruleOf(issue) }];
  });
  problems.sort((a, b) => a.line - b.line || a.column - b.column);
  throw new PolicyError(file, problems);
}

/**
 * The policy at `path`, or the built-in defaults when no path is configured. A path that is set but
 * cannot be read is an error, not a silent fallback to the defaults.
 */
export async function loadPolicy(path: string | undefined): Promise<Policy> {
  if (path === undefined || path.trim() === '') return DEFAULT_POLICY;
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    const code = (err as { code?: string }).code;
    const why = code === 'ENOENT' ? 'there is no such file' : code === 'EACCES' ? 'permission denied' : code;
    throw new PolicyError(
      path,
      [
        {
          at: '',
          line: 1,
          column: 1,
          rule: `cannot read it (${why}); GPUOPS_POLICY must name a readable YAML file, or be left unset for the built-in defaults`,
        },
      ],
      { cause: err },
    );
  }
  return parsePolicy(text, path);
}

/**
 * The offset where the node at `path` starts, or the nearest ancestor that exists. A section
 * (mapping or list) is pointed at by its key, so the line shown is the one that names it; `onKey`
 * points at the key of the last segment itself (unknown keys).
 */
function locate(root: unknown, path: readonly (string | number)[], onKey: boolean): number {
  let node: unknown = root;
  let offset = rangeStart(root) ?? 0;
  for (const [i, segment] of path.entries()) {
    const last = i === path.length - 1;
    if (isMap(node)) {
      const pair = node.items.find((p) => keyText(p.key) === String(segment));
      if (!pair) break;
      const keyStart = rangeStart(pair.key);
      const valueStart = rangeStart(pair.value);
      const isSection = isMap(pair.value) || isSeq(pair.value);
      offset = (last && onKey) || isSection || valueStart === undefined ? (keyStart ?? offset) : valueStart;
      if (isSection && last && !onKey && isFlow(pair.value)) offset = valueStart ?? offset;
      node = pair.value;
    } else if (isSeq(node) && typeof segment === 'number') {
      const item = node.items[segment];
      const start = rangeStart(item);
      if (start === undefined) break;
      offset = start;
      node = item;
    } else {
      break;
    }
  }
  return offset;
}

/** `approvals.always[1]`, `pricing.types["a.1x"].gpu_count`: keys with dots stay readable. */
function dotted(path: readonly (string | number)[]): string {
  return path
    .map((p, i) =>
      typeof p === 'number'
        ? `[${p}]`
        : /^[A-Za-z_][A-Za-z0-9_]*$/.test(p)
          ? `${i > 0 ? '.' : ''}${p}`
          : `[${JSON.stringify(p)}]`,
    )
    .join('');
}

function rangeStart(node: unknown): number | undefined {
  const range = (node as Node | null | undefined)?.range;
  return range ? range[0] : undefined;
}

function isFlow(node: unknown): boolean {
  return (node as { flow?: boolean }).flow === true;
}

function keyText(key: unknown): string {
  return isScalar(key) ? String(key.value) : String(key);
}

const EXPECTED: Record<string, string> = {
  array: 'a list',
  object: 'a mapping of settings',
  record: 'a mapping',
  number: 'a number',
  boolean: 'true or false',
  string: 'text',
};

function described(input: unknown): string {
  if (input === null || input === undefined) return 'nothing';
  if (Array.isArray(input)) return 'a list';
  if (typeof input === 'object') return 'a mapping';
  if (typeof input === 'string') return `text ${JSON.stringify(input)}`;
  return `${typeof input} ${String(input)}`;
}

function ruleOf(issue: z.core.$ZodIssue): string {
  // zod's own wording for a wrong type is generic; ours names what was found.
  if (issue.code === 'invalid_type' && issue.message.startsWith('Invalid input')) {
    const expected = EXPECTED[issue.expected] ?? issue.expected;
    return issue.input === undefined && issue.path.length > 0
      ? `required: expected ${expected}`
      : `expected ${expected}, found ${described(issue.input)}`;
  }
  return issue.message;
}

function unknownKeyRule(path: readonly (string | number)[], key: string): string {
  const parent = path.at(-1);
  if (path.length === 1 && parent === 'roles') {
    return `unknown role ${JSON.stringify(key)}: roles are viewer, operator and admin`;
  }
  if (parent === 'kinds') {
    return `unknown kind ${JSON.stringify(key)}: a kind is a /gpu subcommand with its words joined by dots, such as rm, fs.rm or k8s.pool.rm (docs/commands.md)`;
  }
  const allowed = keysAt(policyFileSchema, path);
  const list = allowed.length > 0 ? `; expected one of ${allowed.join(', ')}` : '';
  return `unknown setting ${JSON.stringify(key)}${list}`;
}

/** The keys a mapping at `path` accepts, read from the schema itself so the list never drifts. */
function keysAt(schema: z.ZodType, path: readonly (string | number)[]): string[] {
  let current: unknown = schema;
  const unwrap = () => {
    for (;;) {
      if (current instanceof ZodOptional || current instanceof ZodDefault || current instanceof ZodPrefault) {
        current = current.unwrap();
      } else if (current instanceof ZodPipe) {
        current = current.in;
      } else {
        return;
      }
    }
  };
  unwrap();
  for (const segment of path) {
    if (current instanceof ZodObject) current = (current.shape as Record<string, unknown>)[String(segment)];
    else if (current instanceof ZodRecord) current = current.valueType;
    else if (current instanceof ZodArray) current = current.element;
    else return [];
    unwrap();
  }
  if (current instanceof ZodObject) return Object.keys(current.shape);
  if (current instanceof ZodRecord && current.keyType instanceof ZodEnum)
    return current.keyType.options.map(String);
  return [];
}
