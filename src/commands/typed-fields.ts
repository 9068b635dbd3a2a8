import { ArgReader, type GrammarIndex } from './arg-reader.js';
import type { CommandSpec } from './spec.js';
import { WordCursor } from './tokenize.js';

// Which fields of a command a person types as its arguments, in order, read from its spec alone: the
// usage line's placeholders (`<instance> <new-name>`) line up with the example's words, and the spec's
// own parser says which field each word of the example became. No field name is special, so a new
// command is described as typed whatever it calls its fields.

type ReadableSpec = Pick<CommandSpec, 'kind' | 'usage' | 'example'>;
type Parse = NonNullable<CommandSpec['parse']>;

/** A flag with the placeholder of its value (`--fs <name>`), or a placeholder standing alone. */
const USAGE_PART = /--[\w-]+(\s+<[^>]+>)?|<[^>]+>/g;

/** How many positional placeholders the usage names after the command's words (`<name>`, not `[topic]`). */
function placeholderCount(usage: string, head: string): number {
  const rest = usage.startsWith(head) ? usage.slice(head.length) : usage;
  return [...rest.matchAll(USAGE_PART)].filter((m) => m[0].startsWith('<')).length;
}

function argumentsOf(example: string, head: string): string {
  return example.startsWith(head) ? example.slice(head.length) : '';
}

/** The words before the first flag: the positional arguments. */
function positionalWords(text: string): string[] {
  const cursor = new WordCursor(text);
  const words: string[] = [];
  for (let w = cursor.next(); w !== null; w = cursor.next()) {
    if (!w.quoted && w.value.startsWith('--') && w.value.length > 2) break;
    words.push(w.value);
  }
  return words;
}

function readExample(
  spec: ReadableSpec,
  path: string,
  parse: Parse,
  text: string,
): Record<string, unknown> | undefined {
  const grammar: GrammarIndex = {
    usageOf: () => spec,
    pathOf: () => path,
    kindsUnder: () => [spec.kind],
    topics: [],
    topWords: [],
    synonyms: {},
  };
  const reader = new ArgReader(new WordCursor(text), grammar);
  reader.enter(spec.kind);
  try {
    return parse(reader) as Record<string, unknown>;
  } catch {
    // An example that does not parse fails its own test (every example must parse); show no values.
    return undefined;
  }
}

const typedAs = (value: unknown): string | undefined =>
  typeof value === 'string' ? value : typeof value === 'number' ? String(value) : undefined;

/**
 * The fields its usage's placeholders hold, in the order they are typed (`['source', 'name']` for
 * `/gpu clone <instance> <new-name>`). `parse` reads the words after `path`: the spec's own, or the
 * sibling's that reads for it (`/gpu waitlist` reads `waitlist.add`). A placeholder whose word became
 * no field as it was typed (an SSH key, which takes the rest of the line) is left out.
 */
export function typedFields(spec: ReadableSpec, path: string, parse: Parse | undefined): readonly string[] {
  if (!parse) return [];
  const head = `/gpu ${path}`;
  const text = argumentsOf(spec.example, head);
  const command = readExample(spec, path, parse, text);
  if (!command) return [];
  const words = positionalWords(text).slice(0, placeholderCount(spec.usage, head));
  const fields: string[] = [];
  for (const word of words) {
    const field = Object.keys(command).find(
      (key) => key !== 'kind' && !fields.includes(key) && typedAs(command[key]) === word,
    );
    if (field !== undefined) fields.push(field);
  }
  return fields;
}
