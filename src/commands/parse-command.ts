import {
  checkImageRef,
  checkK8sVersion,
  checkSize,
  checkUsername,
  K8S_VERSION_RULE,
  parseSshPublicKey,
  SIZE_RULE,
  toImageRef,
  USERNAME_RULE,
} from '../cloud/rules.js';
import {
  type CommandOf,
  commandPath,
  type GpuCommand,
  type GpuCommandKind,
  gpuCommandSchema,
  HELP_TOPICS,
} from './command-schema.js';
import { ALL_SUBCOMMAND_DOCS, docFor } from './grammar.js';
import { straightenQuotes, unescapeSlackText } from './slack-text.js';
import { nearestWord } from './suggest.js';
import { UnclosedQuoteError, type Word, WordCursor } from './tokenize.js';
import {
  checkLabelKey,
  checkLabelValue,
  checkName,
  checkPromql,
  checkTagKey,
  checkTagValue,
  DEFAULT_AUDIT,
  DEFAULT_RANGE_SECONDS,
  MAX_AUDIT,
  MAX_COUNT,
  MAX_WAITLIST_COUNT,
  NAME_RULE,
  parseCount,
  parseDuration,
} from './value-rules.js';

// The pure parser of `/gpu …` text: no I/O, no Slack SDK. Every failure names what was wrong and
// why, with the usage line and an example of the subcommand the person was typing.

export interface ParseError {
  readonly message: string;
  readonly usage: string;
  readonly example: string;
  readonly suggestion?: string;
}
export type ParseResult = { ok: true; command: GpuCommand } | { ok: false; error: ParseError };

/** Top-level words in the order help lists them. */
export const TOP_WORDS = [
  ...new Set(ALL_SUBCOMMAND_DOCS.map((doc) => commandPath(doc.kind).split(' ')[0]!)),
] as readonly string[];

const SUBWORDS = {
  project: ['use'],
  keys: ['add', 'rm'],
  fs: ['create', 'rm'],
  k8s: ['ls', 'show', 'create', 'register', 'rm', 'upgrade', 'label', 'pools', 'pool', 'kubeconfig'],
  'k8s pool': ['add', 'rm'],
  slurm: ['ls', 'show', 'create', 'rm', 'pools', 'pool', 'users', 'adduser', 'rmuser', 'sudo'],
  'slurm pool': ['add', 'rm'],
} as const satisfies Record<string, readonly string[]>;

/** What k8s and slurm subcommands call their first argument in errors. */
const CLUSTER_ARG = 'the cluster name or id';

class CommandError extends Error {
  readonly detail: ParseError;
  constructor(detail: ParseError) {
    super(detail.message);
    this.detail = detail;
  }
}

/** How a value is shown inside an error sentence: short and unable to break Slack formatting. */
function shown(value: string): string {
  const flat = value.replace(/[\s`]+/g, ' ');
  return `"${flat.length > 40 ? `${flat.slice(0, 39)}…` : flat}"`;
}

function withPeriod(text: string): string {
  return /[.?!]$/.test(text) ? text : `${text}.`;
}

type FlagSpec = Readonly<Record<string, 'bool' | 'value' | 'multi'>>;
interface Args {
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

class Parser {
  private readonly cursor: WordCursor;
  /** The subcommand being parsed, for the usage and example in errors. */
  private kind: GpuCommandKind | null = null;
  /** Usage lines to show while only a group (like `k8s`) is known. */
  private group: readonly GpuCommandKind[] = [];

  constructor(text: string) {
    this.cursor = new WordCursor(text);
  }

  fail(message: string, suggestion?: string, kind: GpuCommandKind | null = this.kind): never {
    const kinds = kind ? [kind] : this.group;
    const docs = kinds.length > 0 ? kinds.map(docFor) : [];
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

  private word(): string | null {
    return this.cursor.next()?.value ?? null;
  }

  private enter(kind: GpuCommandKind): void {
    this.kind = kind;
  }

  private label(): string {
    const kind = this.kind ?? this.group[0];
    return kind ? `\`/gpu ${commandPath(kind)}\`` : '`/gpu`';
  }

  /** Reads the remaining words: positionals and the flags `spec` allows. */
  private args(spec: FlagSpec = {}): Args {
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
        if (known.length === 0) this.fail(`${this.label()} takes no flags, but got ${shown(`--${flag}`)}`);
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

  private noMore(args: Args, taken: number): void {
    const extra = args.positionals.slice(taken);
    if (extra.length === 0) return;
    this.fail(
      taken === 0
        ? `${this.label()} takes no arguments, but got ${shown(extra.join(' '))}`
        : `${shown(extra.join(' '))} is more than ${this.label()} takes`,
    );
  }

  private name(value: string | undefined, what: string): string {
    if (value === undefined) this.fail(`${this.label()} needs ${what}`);
    if (checkName(value) !== null) {
      this.fail(`${shown(value)} is not a valid ${what.replace(/^(?:the|a|an) /, '')}: ${NAME_RULE}`);
    }
    return value;
  }

  private count(value: string, max: number, what = 'count'): number {
    const n = parseCount(value, max);
    if (typeof n === 'string') this.fail(`${shown(value)} is not a valid ${what}: ${n}`);
    return n;
  }

  private range(values: readonly string[] | undefined): number {
    const text = values?.[0];
    if (text === undefined) return DEFAULT_RANGE_SECONDS;
    const seconds = parseDuration(text);
    if (typeof seconds === 'string') this.fail(`${shown(text)} is not a valid range: ${seconds}`);
    return seconds;
  }

  private version(value: string | undefined): string {
    if (value === undefined) this.fail(`${this.label()} needs a Kubernetes version such as v1.31`);
    // People often leave out the v; the API needs it.
    const v = /^[0-9]+\.[0-9]+(\.[0-9]+)?$/.test(value) ? `v${value}` : value;
    if (checkK8sVersion(v) !== null) this.fail(`${shown(value)} is not a valid version: ${K8S_VERSION_RULE}`);
    return v;
  }

  private username(value: string | undefined, what: string): string {
    if (value === undefined) this.fail(`${this.label()} needs ${what}`);
    if (checkUsername(value) !== null) this.fail(`${shown(value)} is not a valid username: ${USERNAME_RULE}`);
    return value;
  }

  /** The cluster a k8s or slurm subcommand names first. */
  private cluster(a: Args): string {
    return this.name(a.positionals[0], CLUSTER_ARG);
  }

  /** Enters `kind`, whose one argument is a name or id, and reads it. */
  private onlyName(kind: GpuCommandKind, what: string): string {
    this.enter(kind);
    const a = this.args();
    const name = this.name(a.positionals[0], what);
    this.noMore(a, 1);
    return name;
  }

  /** A second-level word of a group, lowercased, or a "did you mean" failure. */
  private sub(group: keyof typeof SUBWORDS, value: string): string {
    const lower = value.toLowerCase();
    const known: readonly string[] = SUBWORDS[group];
    if (known.includes(lower)) return lower;
    const near = nearestWord(lower, known);
    if (near) this.focus(`${group} ${near}`);
    this.fail(
      `\`/gpu ${group}\` has no subcommand ${shown(value)}; it has ${known.join(', ')}`,
      near ? `Did you mean \`/gpu ${group} ${near}\`?` : undefined,
    );
  }

  parse(): GpuCommand {
    const first = this.word();
    if (first === null) return { kind: 'help' };
    const top = first.toLowerCase().replace(/^\/gpu$/, '');
    switch (top) {
      case '':
        return this.parse();
      case 'help':
      case '--help':
      case '-h':
        return this.help();
      case 'projects':
      case 'ls':
      case 'capacity':
      case 'configs':
      case 'jobs':
      case 'approvals': {
        this.enter(top);
        this.noMore(this.args(), 0);
        return { kind: top };
      }
      case 'project':
        return this.project();
      case 'show':
      case 'start':
      case 'stop':
      case 'rm':
        return { kind: top, instance: this.onlyName(top, 'the instance name or id') };
      case 'create':
        return this.create();
      case 'keys':
        return this.keys();
      case 'fs':
        return this.fs();
      case 'k8s':
        return this.k8s();
      case 'slurm':
        return this.slurm();
      case 'metrics':
        return this.metrics();
      case 'watch':
        return this.watch();
      case 'waitlist':
        return this.waitlist();
      case 'audit': {
        this.enter('audit');
        const a = this.args();
        const n = a.positionals[0];
        this.noMore(a, 1);
        return {
          kind: 'audit',
          limit: n === undefined ? DEFAULT_AUDIT : this.count(n, MAX_AUDIT, 'number of entries'),
        };
      }
      default:
        return this.unknown(first);
    }
  }

  /** Shows the usage of the subcommands under `path`, the one the person most likely meant. */
  private focus(path: string): void {
    this.kind = null;
    this.group = ALL_SUBCOMMAND_DOCS.map((doc) => doc.kind).filter((kind) => {
      const p = commandPath(kind);
      return p === path || p.startsWith(`${path} `);
    });
  }

  private unknown(word: string): never {
    const near = nearestWord(word, TOP_WORDS);
    if (near) {
      this.focus(near);
      this.fail(`There is no subcommand ${shown(word)}`, `Did you mean \`/gpu ${near}\`?`);
    }
    // A second-level word typed alone: `/gpu kubeconfig prod` → `/gpu k8s kubeconfig`.
    const lower = word.toLowerCase();
    const owner = ALL_SUBCOMMAND_DOCS.map((doc) => commandPath(doc.kind)).find((path) =>
      path.split(' ').slice(1).includes(lower),
    );
    const ownerPath = owner?.slice(0, owner.indexOf(` ${lower}`) + lower.length + 1);
    if (ownerPath) this.focus(ownerPath);
    this.fail(
      `There is no subcommand ${shown(word)}`,
      ownerPath ? `Did you mean \`/gpu ${ownerPath}\`?` : 'Type `/gpu help` to see them all.',
    );
  }

  private help(): GpuCommand {
    this.enter('help');
    const words = this.cursor
      .all()
      .map((w) => w.value.toLowerCase())
      .filter((w) => w !== '/gpu');
    if (words.length === 0) return { kind: 'help' };
    for (let n = words.length; n > 0; n--) {
      const topic = words.slice(0, n).join(' ');
      if (HELP_TOPICS.includes(topic)) return { kind: 'help', topic };
    }
    const near = nearestWord(words[0]!, TOP_WORDS);
    this.fail(
      `There is no help topic ${shown(words.join(' '))}; topics are the subcommands`,
      near ? `Did you mean \`/gpu help ${near}\`?` : undefined,
    );
  }

  private project(): GpuCommand {
    this.group = ['project', 'project.use'];
    const second = this.word();
    if (second === null) return { kind: 'project' };
    this.sub('project', second);
    return { kind: 'project.use', project: this.onlyName('project.use', 'the project name or id') };
  }

  private create(): GpuCommand {
    this.enter('create');
    const a = this.args({
      image: 'value',
      preemptible: 'bool',
      ephemeral: 'bool',
      fs: 'multi',
      tag: 'multi',
    });
    const flagged = Object.keys(a.values).length + Object.keys(a.bools).length > 0;
    if (a.positionals.length === 0 && !flagged) return { kind: 'create', modal: true };
    const name = this.name(a.positionals[0], 'a name for the instance');
    const type = this.name(a.positionals[1], 'the instance type after the name');
    this.noMore(a, 2);
    const imageText = a.values.image?.[0];
    let image: string | undefined;
    if (imageText !== undefined) {
      image = toImageRef(imageText);
      const rule = checkImageRef(image);
      if (rule !== null) this.fail(`${shown(imageText)} is not a valid image: ${rule}`);
    }
    const filesystems = [...new Set((a.values.fs ?? []).map((fs) => this.name(fs, 'filesystem name')))];
    const tags: Record<string, string> = {};
    for (const pair of a.values.tag ?? []) {
      const [key, value] = this.pair(pair, '--tag', checkTagKey, checkTagValue);
      if (Object.hasOwn(tags, key)) this.fail(`The tag ${shown(key)} was given twice; give each key once`);
      tags[key] = value;
    }
    return {
      kind: 'create',
      modal: false,
      name,
      type,
      ...(image !== undefined ? { image } : {}),
      preemptible: a.bools.preemptible ?? false,
      ephemeral: a.bools.ephemeral ?? false,
      filesystems,
      tags,
    };
  }

  /** key=value with the key and value rules of tags or labels. */
  private pair(
    text: string,
    what: string,
    checkKey: (k: string) => string | null,
    checkValue: (v: string) => string | null,
  ): [string, string] {
    const eq = text.indexOf('=');
    if (eq <= 0) this.fail(`${what} needs key=value, but got ${shown(text)}`);
    const key = text.slice(0, eq);
    const value = text.slice(eq + 1);
    const keyRule = checkKey(key);
    if (keyRule !== null) this.fail(`${shown(key)} is not a valid key: ${keyRule}`);
    const valueRule = checkValue(value);
    if (valueRule !== null) this.fail(`The value of ${shown(key)} is not valid: ${valueRule}`);
    return [key, value];
  }

  private keys(): GpuCommand {
    this.group = ['keys', 'keys.add', 'keys.rm'];
    const second = this.word();
    if (second === null) return { kind: 'keys' };
    if (this.sub('keys', second) === 'rm') {
      return { kind: 'keys.rm', name: this.onlyName('keys.rm', 'the name of the key') };
    }
    this.enter('keys.add');
    const nameWord = this.word();
    if (nameWord === null) return { kind: 'keys.add', modal: true };
    const name = this.name(nameWord, 'a name for the key');
    const text = stripOuterQuotes(this.cursor.rest());
    if (text === '') {
      this.fail(`${this.label()} needs the public key after the name (or no arguments, for a form)`);
    }
    const parsed = parseSshPublicKey(text);
    if (typeof parsed === 'string') this.fail(`That public key is not valid: ${parsed}`);
    const publicKey = [parsed.type, parsed.blob, parsed.comment].filter((p) => p !== '').join(' ');
    return { kind: 'keys.add', modal: false, name, publicKey };
  }

  private fs(): GpuCommand {
    this.group = ['fs', 'fs.create', 'fs.rm'];
    const second = this.word();
    if (second === null) return { kind: 'fs' };
    if (this.sub('fs', second) === 'rm') {
      return { kind: 'fs.rm', name: this.onlyName('fs.rm', 'the filesystem name') };
    }
    this.enter('fs.create');
    const a = this.args();
    const name = this.name(a.positionals[0], 'a name for the filesystem');
    const size = a.positionals[1];
    if (size === undefined) this.fail(`${this.label()} needs a size after the name, like 512Gi`);
    if (checkSize(size) !== null) this.fail(`${shown(size)} is not a valid size: ${SIZE_RULE}`);
    this.noMore(a, 2);
    return { kind: 'fs.create', name, size };
  }

  /** The second word of `/gpu k8s …` or `/gpu slurm …`, showing the group's usage until then. */
  private clusterSub(family: 'k8s' | 'slurm'): string {
    const kinds = ALL_SUBCOMMAND_DOCS.map((doc) => doc.kind);
    this.group = kinds.filter((kind) => kind.startsWith(`${family}.`));
    const second = this.word();
    if (second === null) {
      const known = SUBWORDS[family];
      this.fail(`\`/gpu ${family}\` needs a subcommand: ${known.slice(0, -1).join(', ')} or ${known.at(-1)}`);
    }
    return this.sub(family, second);
  }

  private k8s(): GpuCommand {
    const sub = this.clusterSub('k8s');
    switch (sub) {
      case 'ls': {
        this.enter('k8s.ls');
        this.noMore(this.args(), 0);
        return { kind: 'k8s.ls' };
      }
      case 'show':
      case 'rm':
      case 'pools':
      case 'kubeconfig': {
        const kind = `k8s.${sub}` as const;
        return { kind, cluster: this.onlyName(kind, CLUSTER_ARG) };
      }
      case 'create': {
        this.enter('k8s.create');
        const a = this.args();
        if (a.positionals.length === 0) return { kind: 'k8s.create', modal: true };
        const name = this.name(a.positionals[0], 'a name for the cluster');
        const version = this.version(a.positionals[1]);
        this.noMore(a, 2);
        return { kind: 'k8s.create', modal: false, name, version };
      }
      case 'register': {
        this.enter('k8s.register');
        const a = this.args();
        if (a.positionals.length > 0) {
          this.fail(
            `${this.label()} takes no arguments: it opens a form for the name, kubeconfig and labels`,
          );
        }
        return { kind: 'k8s.register', modal: true };
      }
      case 'upgrade': {
        this.enter('k8s.upgrade');
        const a = this.args();
        const c = this.cluster(a);
        const version = this.version(a.positionals[1]);
        this.noMore(a, 2);
        return { kind: 'k8s.upgrade', cluster: c, version };
      }
      case 'label': {
        this.enter('k8s.label');
        const a = this.args();
        const c = this.cluster(a);
        const pairs = a.positionals.slice(1);
        if (pairs.length === 0) {
          this.fail(`${this.label()} needs at least one label as key=value after the cluster`);
        }
        const labels: Record<string, string> = {};
        for (const text of pairs) {
          const [key, value] = this.pair(text, 'A label', checkLabelKey, checkLabelValue);
          if (Object.hasOwn(labels, key)) {
            this.fail(`The label ${shown(key)} was given twice; give each key once`);
          }
          labels[key] = value;
        }
        return { kind: 'k8s.label', cluster: c, labels };
      }
      default:
        return this.pool('k8s');
    }
  }

  private slurm(): GpuCommand {
    const sub = this.clusterSub('slurm');
    switch (sub) {
      case 'ls': {
        this.enter('slurm.ls');
        this.noMore(this.args(), 0);
        return { kind: 'slurm.ls' };
      }
      case 'show':
      case 'rm':
      case 'pools':
      case 'users': {
        const kind = `slurm.${sub}` as const;
        return { kind, cluster: this.onlyName(kind, CLUSTER_ARG) };
      }
      case 'create': {
        this.enter('slurm.create');
        const a = this.args();
        if (a.positionals.length === 0) return { kind: 'slurm.create', modal: true };
        const name = this.name(a.positionals[0], 'a name for the cluster');
        this.noMore(a, 1);
        return { kind: 'slurm.create', modal: false, name };
      }
      case 'adduser': {
        this.enter('slurm.adduser');
        const a = this.args({ sudo: 'bool', username: 'value', form: 'bool' });
        const c = this.cluster(a);
        this.noMore(a, 1);
        const given = a.values.username?.[0];
        const username = given === undefined ? undefined : this.username(given, 'a username');
        return {
          kind: 'slurm.adduser',
          cluster: c,
          sudo: a.bools.sudo ?? false,
          ...(username !== undefined ? { username } : {}),
          ...(a.bools.form ? { modal: true } : {}),
        };
      }
      case 'rmuser': {
        this.enter('slurm.rmuser');
        const a = this.args();
        const c = this.cluster(a);
        const user = this.username(a.positionals[1], 'the username to remove');
        this.noMore(a, 2);
        return { kind: 'slurm.rmuser', cluster: c, user };
      }
      case 'sudo': {
        this.enter('slurm.sudo');
        const a = this.args();
        const c = this.cluster(a);
        const user = this.username(a.positionals[1], 'the username');
        const state = a.positionals[2];
        if (state === undefined) this.fail(`${this.label()} needs on or off after the username`);
        const on = this.onOff(state);
        this.noMore(a, 3);
        return { kind: 'slurm.sudo', cluster: c, user, sudo: on === 'on' };
      }
      default:
        return this.pool('slurm');
    }
  }

  private pool(family: 'k8s' | 'slurm'): GpuCommand {
    const third = this.word();
    const addKind = `${family}.pool.add` as const;
    const rmKind = `${family}.pool.rm` as const;
    this.group = [addKind, rmKind];
    if (third === null) this.fail(`\`/gpu ${family} pool\` needs add or rm`);
    const sub = this.sub(`${family} pool`, third);
    const a = this.args();
    if (sub === 'rm') {
      this.enter(rmKind);
      const cluster = this.cluster(a);
      const pool = this.name(a.positionals[1], 'the node pool name or id');
      this.noMore(a, 2);
      return { kind: rmKind, cluster, pool };
    }
    this.enter(addKind);
    const cluster = this.cluster(a);
    if (a.positionals.length === 1) return { kind: addKind, modal: true, cluster };
    const name = this.name(a.positionals[1], 'a name for the node pool');
    const type = this.name(a.positionals[2], 'the instance type after the pool name');
    const countText = a.positionals[3];
    if (countText === undefined) {
      this.fail(`${this.label()} needs the number of nodes after the instance type`);
    }
    const count = this.count(countText, MAX_COUNT, 'node count');
    this.noMore(a, 4);
    return { kind: addKind, modal: false, cluster, name, type, count } as CommandOf<typeof addKind>;
  }

  private onOff(value: string): 'on' | 'off' {
    const lower = value.toLowerCase();
    if (lower === 'on' || lower === 'off') return lower;
    const near = nearestWord(lower, ['on', 'off']);
    this.fail(`${shown(value)} is neither on nor off`, near ? `Did you mean \`${near}\`?` : undefined);
  }

  private metrics(): GpuCommand {
    this.group = ['metrics', 'metrics.query'];
    const second = this.cursor.next();
    if (second === null) {
      this.fail(
        '`/gpu metrics` needs an instance name or id, or query and a PromQL expression',
        undefined,
        'metrics',
      );
    }
    if (!second.quoted && second.value.toLowerCase() === 'query') return this.query();
    this.enter('metrics');
    const instance = this.name(second.value, 'the instance name or id');
    const a = this.args({ range: 'value' });
    if (a.positionals.length > 0 && nearestWord(second.value, ['query']) !== null) {
      this.focus('metrics query');
      this.fail(
        `${shown(a.positionals.join(' '))} is more than \`/gpu metrics\` takes`,
        'Did you mean `/gpu metrics query`?',
      );
    }
    this.noMore(a, 0);
    return { kind: 'metrics', instance, rangeSeconds: this.range(a.values.range) };
  }

  private query(): GpuCommand {
    this.enter('metrics.query');
    let text = this.cursor.rest();
    let rangeText: string | undefined;
    // --range may come before or after the expression, which itself is the raw rest of the line.
    const trailing = /(?:^|\s)(?:--|—|–)range(?:=|\s+)(\S+)\s*$/i.exec(text);
    if (trailing) {
      rangeText = trailing[1];
      text = text.slice(0, trailing.index).trim();
    } else {
      const leading = /^(?:--|—|–)range(?:=|\s+)(\S+)(?:\s+|$)/i.exec(text);
      if (leading) {
        rangeText = leading[1];
        text = text.slice(leading[0].length).trim();
      }
    }
    const promql = straightenQuotes(stripOuterQuotes(text));
    if (promql === '') this.fail(`${this.label()} needs a PromQL expression`);
    const rule = checkPromql(promql);
    if (rule !== null) this.fail(`That expression is too long: write ${rule}`);
    return {
      kind: 'metrics.query',
      promql,
      rangeSeconds: this.range(rangeText === undefined ? undefined : [rangeText]),
    };
  }

  private watch(): GpuCommand {
    this.enter('watch');
    const a = this.args();
    const state = a.positionals[0];
    this.noMore(a, 1);
    return state === undefined ? { kind: 'watch' } : { kind: 'watch', state: this.onOff(state) };
  }

  private waitlist(): GpuCommand {
    this.group = ['waitlist', 'waitlist.add', 'waitlist.rm'];
    const a = this.args();
    const [first, second] = a.positionals;
    if (first === undefined) {
      this.enter('waitlist');
      return { kind: 'waitlist' };
    }
    if (first.toLowerCase() === 'rm') {
      this.enter('waitlist.rm');
      const id = this.name(second, 'the waitlist entry id');
      this.noMore(a, 2);
      return { kind: 'waitlist.rm', id };
    }
    this.enter('waitlist.add');
    const type = this.name(first, 'instance type');
    const count = second === undefined ? 1 : this.count(second, MAX_WAITLIST_COUNT, 'number of machines');
    this.noMore(a, 2);
    return { kind: 'waitlist.add', type, count };
  }
}

function stripOuterQuotes(text: string): string {
  const pairs: Readonly<Record<string, string>> = { '"': '"', "'": "'", '“': '”', '‘': '’' };
  const close = pairs[text[0] ?? ''];
  return text.length >= 2 && close !== undefined && text.endsWith(close) ? text.slice(1, -1).trim() : text;
}

/** Parses the text of `/gpu …` (as Slack sends it) into a typed command. Never throws. */
export function parseCommand(text: string): ParseResult {
  const parser: Parser = new Parser(unescapeSlackText(String(text ?? '')));
  try {
    const command = parser.parse();
    // The schema is the contract downstream: a command the parser built must pass it.
    const checked = gpuCommandSchema.safeParse(command);
    if (!checked.success) {
      parser.fail(
        `That command has a value the bot cannot accept: ${checked.error.issues[0]?.message ?? 'invalid'}`,
      );
    }
    return { ok: true, command: checked.data };
  } catch (err) {
    if (err instanceof CommandError) return { ok: false, error: err.detail };
    if (err instanceof UnclosedQuoteError) {
      try {
        parser.fail('A quote was opened and never closed; close it, or leave quotes out of names');
      } catch (inner) {
        if (inner instanceof CommandError) return { ok: false, error: inner.detail };
      }
    }
    return {
      ok: false,
      error: { message: 'That command could not be read.', usage: '/gpu help', example: '/gpu help' },
    };
  }
}
