import { ArgReader, CommandError, type GrammarIndex, type ParseError, shown } from './arg-reader.js';
import {
  allSpecs,
  commandPath,
  type GpuCommand,
  gpuCommandSchema,
  HELP_TOPICS,
  SPECS_IN_HELP_ORDER,
  SYNONYMS,
  specFor,
  specsRevision,
} from './registry.js';
import { unescapeSlackText } from './slack-text.js';
import { nearestWord } from './suggest.js';
import { UnclosedQuoteError, WordCursor } from './tokenize.js';

// The pure parser of `/gpu …` text: no I/O, no Slack SDK. The words of every spec form a tree; the
// parser walks it, then hands the rest of the line to the spec's own reader. Every failure names what
// was wrong and why, with the usage line and an example of the subcommand the person was typing.

export type { ParseError };
export type ParseResult = { ok: true; command: GpuCommand } | { ok: false; error: ParseError };

interface WordNode {
  readonly children: Map<string, WordNode>;
  /** The spec whose reader takes over here (the first one whose words end here and that reads). */
  reader?: ReturnType<typeof allSpecs>[number];
}

function buildTree(): WordNode {
  const root: WordNode = { children: new Map() };
  for (const spec of allSpecs()) {
    let node = root;
    for (const word of commandPath(spec.kind).split(' ')) {
      let child = node.children.get(word);
      if (!child) {
        child = { children: new Map() };
        node.children.set(word, child);
      }
      node = child;
    }
    if (!node.reader && spec.parse) node.reader = spec;
  }
  return root;
}

let tree = buildTree();

/** Top-level words in the order help lists them. */
export const TOP_WORDS: readonly string[] = [];

const topWords = () => [...new Set(SPECS_IN_HELP_ORDER.map((spec) => commandPath(spec.kind).split(' ')[0]!))];
(TOP_WORDS as string[]).push(...topWords());
let builtAt = specsRevision();

/** Rebuilds the word tree and the top words after a family was added (registry.ts, addSpecs). */
function current(): WordNode {
  if (builtAt !== specsRevision()) {
    tree = buildTree();
    (TOP_WORDS as string[]).splice(0, TOP_WORDS.length, ...topWords());
    builtAt = specsRevision();
  }
  return tree;
}

const GRAMMAR: GrammarIndex = {
  usageOf: (kind) => specFor(kind),
  pathOf: commandPath,
  kindsUnder: (path) =>
    SPECS_IN_HELP_ORDER.map((s) => s.kind).filter((kind) => {
      const p = commandPath(kind);
      return p === path || p.startsWith(`${path} `);
    }),
  topics: HELP_TOPICS,
  topWords: TOP_WORDS,
  synonyms: SYNONYMS,
};

const HELP_WORDS = new Set(['help', '--help', '-h']);

function listWords(words: readonly string[]): string {
  return words.length > 1 ? `${words.slice(0, -1).join(', ')} or ${words.at(-1)}` : (words[0] ?? '');
}

/** `/gpu kubeconfig prod` → `k8s kubeconfig`: a second-level word typed alone. */
function ownerOf(word: string): string | undefined {
  const owner = SPECS_IN_HELP_ORDER.map((spec) => commandPath(spec.kind)).find((path) =>
    path.split(' ').slice(1).includes(word),
  );
  return owner?.slice(0, owner.indexOf(` ${word}`) + word.length + 1);
}

function unknownTop(r: ArgReader, word: string): never {
  const near = nearestWord(word, TOP_WORDS, SYNONYMS);
  if (near) {
    r.focus(near);
    r.fail(`There is no subcommand ${shown(word)}`, `Did you mean \`/gpu ${near}\`?`);
  }
  const ownerPath = ownerOf(word.toLowerCase());
  if (ownerPath) r.focus(ownerPath);
  r.fail(
    `There is no subcommand ${shown(word)}`,
    ownerPath ? `Did you mean \`/gpu ${ownerPath}\`?` : 'Type `/gpu help` to see them all.',
  );
}

function parseWords(r: ArgReader, cursor: WordCursor): GpuCommand {
  let first = cursor.next();
  // A pasted `/gpu` before the subcommand is ignored.
  while (first !== null && first.value.toLowerCase() === '/gpu') first = cursor.next();
  const top = first?.value.toLowerCase() ?? 'help';
  let node: WordNode | undefined = current().children.get(HELP_WORDS.has(top) ? 'help' : top);
  if (!node) return unknownTop(r, first!.value);
  let path = HELP_WORDS.has(top) ? 'help' : top;
  while (node.children.size > 0) {
    r.focus(path);
    const next = cursor.peek();
    const lower = next?.value.toLowerCase() ?? '';
    const child: WordNode | undefined = next && !next.quoted ? node.children.get(lower) : undefined;
    if (child) {
      cursor.next();
      node = child;
      path = `${path} ${lower}`;
      continue;
    }
    const known = [...node.children.keys()];
    if (next === null) {
      if (node.reader) break;
      r.fail(`\`/gpu ${path}\` needs a subcommand: ${listWords(known)}`);
    }
    if (node.reader?.freeWords) break;
    // `/gpu fs --page 2`: a flag is the group's own command's, never a subcommand.
    if (node.reader && !next.quoted && next.value.startsWith('--') && next.value.length > 2) break;
    const near = nearestWord(lower, known, SYNONYMS);
    if (near) r.focus(`${path} ${near}`);
    r.fail(
      `\`/gpu ${path}\` has no subcommand ${shown(next.value)}; it has ${known.join(', ')}`,
      near ? `Did you mean \`/gpu ${path} ${near}\`?` : undefined,
    );
  }
  const spec = node.reader;
  if (!spec?.parse) throw new Error(`no reader for /gpu ${path}`);
  r.enter(spec.kind);
  return spec.parse(r) as GpuCommand;
}

/** Parses the text of `/gpu …` (as Slack sends it) into a typed command. Never throws. */
export function parseCommand(text: string): ParseResult {
  const cursor = new WordCursor(unescapeSlackText(String(text ?? '')));
  const reader: ArgReader = new ArgReader(cursor, GRAMMAR);
  try {
    const command = parseWords(reader, cursor);
    // The schema is the contract downstream: a command the parser built must pass it.
    const checked = gpuCommandSchema.safeParse(command);
    if (!checked.success) {
      reader.fail(
        `That command has a value the bot cannot accept: ${checked.error.issues[0]?.message ?? 'invalid'}`,
      );
    }
    return { ok: true, command: checked.data };
  } catch (err) {
    if (err instanceof CommandError) return { ok: false, error: err.detail };
    if (err instanceof UnclosedQuoteError) {
      try {
        reader.fail('A quote was opened and never closed; close it, or leave quotes out of names');
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
