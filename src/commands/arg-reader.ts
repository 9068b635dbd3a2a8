import { checkK8sVersion, checkUsername, K8S_VERSION_RULE, USERNAME_RULE } from '../cloud/rules.js';
import { nearestWord } from './suggest.js';
import type { Word, WordCursor } from './tokenize.js';
import { checkName, DEFAULT_RANGE_SECONDS, NAME_RULE, parseCount, parseDuration } from './value-rules.js';

// The reading half of the parser, shared by every command spec: words, flags, names, counts and
// ranges, each failure a sentence with the usage and example of the subcommand being typed.

export interface ParseError {
  readonly message: string;
  readonly usage: string;
  readonly example: string;
  readonly suggestion?: string;
}

/** What the reader needs to know of the grammar as a whole (given by the registry). */
export interface GrammarIndex {
  usageOf(kind: string): { readonly usage: string; readonly example: string };
  /** The words a kind is typed with (`k8s pool add`). */
  pathOf(kind: string): string;
  /** Kinds whose words are `path` or start with it. */
  kindsUnder(path: string): readonly string[];
  readonly topics: readonly string[];
  readonly topWords: readonly string[];
  /** Words people type for grammar words (`delete` → `rm`). */
  readonly synonyms: Readonly<Record<string, string>>;
}

export class CommandError extends Error {
  readonly detail: ParseError;
  constructor(detail: ParseError) {
    super(detail.message);
    this.detail = detail;
  }
}

/** How a value is shown inside an error sentence: short and unable to break Slack formatting. */
export function shown(value: string): string {
  const flat = value.replace(/[\s`]+/g, ' ');
  return `"${flat.length > 40 ? `${flat.slice(0, 39)}…` : flat}"`;
}

function withPeriod(text: string): string {
  return /[.?!]$/.test(text) ? text : `${text}.`;
}

export type FlagSpec = Readonly<Record<string, 'bool' | 'value' | 'multi'>>;
/** The flag of every paged list: `/gpu ls --page 3`. */
export const PAGE_FLAG: FlagSpec = { page: 'value' };
/** More pages than any list of a project has (20 lines a page). */
export const MAX_PAGE = 10_000;
export interface Args {
  readonly positionals: readonly string[];
  readonly values: Readonly<Record<string, readonly string[]>>;
  readonly bools: Readonly<Record<string, boolean>>;
}

const BOOL_WORDS: Readonly<Record<string, boolean>> = {
  true: true,
  yes: true,
  on: true,
  false: false,
  no: false,
  off: false,
};

export class ArgReader {
  /** The subcommand being parsed, for the usage and example in errors. */
  private kind: string | null = null;
  /** Usage lines to show while only a group (like `k8s`) is known. */
  private group: readonly string[] = [];

  constructor(
    readonly cursor: WordCursor,
    readonly grammar: GrammarIndex,
  ) {}

  fail(message: string, suggestion?: string, kind: string | null = this.kind): never {
    const kinds = kind ? [kind] : this.group;
    const docs = kinds.map((k) => this.grammar.usageOf(k));
    const usage =
      docs.length > 0
        ? docs.map((doc) => doc.usage).join('\n')
        : '/gpu <subcommand> [arguments]; /gpu help lists them';
    const example = docs[0]?.example ?? '/gpu help';
    throw new CommandError({
      message: withPeriod(message),
      usage,
      example,
      ...(suggestion !== undefined ? { suggestion } : {}),
    });
  }

  /** The next word's text, or null at the end. */
  word(): string | null {
    return this.cursor.next()?.value ?? null;
  }

  /** The next word with whether it was quoted, or null at the end. */
  next(): Word | null {
    return this.cursor.next();
  }

  /** The raw rest of the line (for a public key or a PromQL expression). */
  rest(): string {
    return this.cursor.rest();
  }

  /** From now on errors show this subcommand's usage. */
  enter(kind: string): void {
    this.kind = kind;
  }

  /** Errors show the usage of every subcommand under `path` until one is entered. */
  focus(path: string): void {
    this.kind = null;
    this.group = this.grammar.kindsUnder(path);
  }

  /** The subcommand as quoted in errors: `/gpu k8s pool add`. */
  label(): string {
    const kind = this.kind ?? this.group[0];
    return kind ? `\`/gpu ${this.grammar.pathOf(kind)}\`` : '`/gpu`';
  }

  /** Reads the remaining words: positionals and the flags `spec` allows. */
  args(spec: FlagSpec = {}): Args {
    const positionals: string[] = [];
    const values: Record<string, string[]> = {};
    const bools: Record<string, boolean> = {};
    const words = this.cursor.all();
    for (let i = 0; i < words.length; i++) {
      const w: Word = words[i]!;
      if (w.quoted || !w.value.startsWith('--') || w.value.length <= 2) {
        positionals.push(w.value);
        continue;
      }
      const eq = w.value.indexOf('=');
      const flag = (eq === -1 ? w.value.slice(2) : w.value.slice(2, eq)).toLowerCase();
      const inline = eq === -1 ? undefined : w.value.slice(eq + 1);
      const type = spec[flag];
      if (type === undefined) {
        const known = Object.keys(spec);
        if (known.length === 0) this.fail(`${this.label()} takes no flags; leave out ${shown(`--${flag}`)}`);
        const near = nearestWord(flag, known);
        this.fail(
          `${this.label()} has no flag ${shown(`--${flag}`)}; it takes ${known.map((k) => `--${k}`).join(', ')}`,
          near ? `Did you mean \`--${near}\`?` : undefined,
        );
      }
      if (type === 'bool') {
        if (inline === undefined) {
          bools[flag] = true;
          continue;
        }
        const b = BOOL_WORDS[inline.toLowerCase()];
        if (b === undefined) {
          this.fail(`--${flag} is a switch: write --${flag} alone, or --${flag}=true or false`);
        }
        bools[flag] = b;
        continue;
      }
      let value = inline;
      if (value === undefined) {
        const nextWord = words[i + 1];
        if (
          nextWord === undefined ||
          (!nextWord.quoted && nextWord.value.startsWith('--') && nextWord.value.length > 2)
        ) {
          this.fail(`--${flag} needs a value after it`);
        }
        value = nextWord.value;
        i++;
      }
      const list = values[flag] ?? [];
      if (type === 'value' && list.length > 0) this.fail(`--${flag} was given twice; give it once`);
      list.push(value);
      values[flag] = list;
    }
    return { positionals, values, bools };
  }

  /** Fails when more positionals came than the subcommand takes (`readBefore`: words it read itself). */
  noMore(args: Args, taken: number, readBefore = 0): void {
    const extra = args.positionals.slice(taken);
    if (extra.length === 0) return;
    this.fail(
      taken + readBefore === 0
        ? `${this.label()} takes no arguments; leave out ${shown(extra.join(' '))}`
        : `${shown(extra.join(' '))} is more than ${this.label()} takes; leave it out, or quote a value that has spaces`,
    );
  }

  /** Reads a subcommand that takes no arguments at all. */
  nothing(): void {
    this.noMore(this.args(), 0);
  }

  name(value: string | undefined, what: string): string {
    if (value === undefined) this.fail(`${this.label()} needs ${what}`);
    if (checkName(value) !== null) {
      this.fail(`${shown(value)} is not a valid ${what.replace(/^(?:the|a|an) /, '')}: ${NAME_RULE}`);
    }
    return value;
  }

  /** `--page N` of a paged list (1 is the first page), when given. */
  page(args: Args): { page?: number } {
    const text = args.values.page?.[0];
    return text === undefined ? {} : { page: this.count(text, MAX_PAGE, 'page number') };
  }

  /** A paged list's one name or id argument, and its `--page N`. */
  pagedName(what: string): { name: string; page?: number } {
    const a = this.args(PAGE_FLAG);
    const name = this.name(a.positionals[0], what);
    this.noMore(a, 1);
    return { name, ...this.page(a) };
  }

  /** Reads the one argument of a subcommand that takes a name or id and nothing else. */
  onlyName(what: string): string {
    const a = this.args();
    const name = this.name(a.positionals[0], what);
    this.noMore(a, 1);
    return name;
  }

  count(value: string, max: number, what = 'count'): number {
    const n = parseCount(value, max, what);
    if (typeof n === 'string') this.fail(`${shown(value)} is not a valid ${what}: ${n}`);
    return n;
  }

  range(values: readonly string[] | undefined): number {
    const text = values?.[0];
    if (text === undefined) return DEFAULT_RANGE_SECONDS;
    const seconds = parseDuration(text);
    if (typeof seconds === 'string') this.fail(`${shown(text)} is not a valid range: ${seconds}`);
    return seconds;
  }

  version(value: string | undefined): string {
    if (value === undefined) this.fail(`${this.label()} needs a Kubernetes version such as v1.31`);
    // People often leave out the v; the API needs it.
    const v = /^[0-9]+\.[0-9]+(\.[0-9]+)?$/.test(value) ? `v${value}` : value;
    if (checkK8sVersion(v) !== null) this.fail(`${shown(value)} is not a valid version: ${K8S_VERSION_RULE}`);
    return v;
  }

  username(value: string | undefined, what: string): string {
    if (value === undefined) this.fail(`${this.label()} needs ${what}`);
    if (checkUsername(value) !== null) this.fail(`${shown(value)} is not a valid username: ${USERNAME_RULE}`);
    return value;
  }

  /** key=value with the key and value rules of tags or labels. */
  pair(
    text: string,
    what: string,
    checkKey: (k: string) => string | null,
    checkValue: (v: string) => string | null,
  ): [string, string] {
    const eq = text.indexOf('=');
    if (eq <= 0) this.fail(`${what} needs key=value, such as team=ml, not ${shown(text)}`);
    const key = text.slice(0, eq);
    const value = text.slice(eq + 1);
    const keyRule = checkKey(key);
    if (keyRule !== null) this.fail(`${shown(key)} is not a valid key: ${keyRule}`);
    const valueRule = checkValue(value);
    if (valueRule !== null) this.fail(`The value of ${shown(key)} is not valid: ${valueRule}`);
    return [key, value];
  }

  onOff(value: string): 'on' | 'off' {
    const lower = value.toLowerCase();
    if (lower === 'on' || lower === 'off') return lower;
    const near = nearestWord(lower, ['on', 'off']);
    this.fail(
      `${shown(value)} is neither on nor off: type on or off`,
      near ? `Did you mean \`${near}\`?` : undefined,
    );
  }
}

/** Text without one pair of outer quotes ("…", '…', “…”, ‘…’). */
export function stripOuterQuotes(text: string): string {
  const pairs: Readonly<Record<string, string>> = { '"': '"', "'": "'", '“': '”', '‘': '’' };
  const close = pairs[text[0] ?? ''];
  return text.length >= 2 && close !== undefined && text.endsWith(close) ? text.slice(1, -1).trim() : text;
}
