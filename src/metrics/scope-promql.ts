import { parser } from '@prometheus-io/lezer-promql';
import { ValidationError } from '../errors.js';
import { escapePromqlString } from './catalog.js';

// `/gpu metrics query` runs a person's own PromQL. Before it leaves gpuops every vector selector (inside
// range selectors, subqueries, functions, aggregations and binary operations alike) gets the matcher
// `<label>="<project>"`, as prom-label-proxy does, so a channel reads only its own project's series.
// The expression is parsed with the Prometheus project's own grammar; anything it cannot read, or a
// selector that names the project label itself with another value, is refused rather than guessed at.

export interface PromqlScope {
  /** The label carrying the project id on every series (METRICS_PROJECT_LABEL). */
  readonly label: string;
  /** The project the query is limited to. */
  readonly value: string;
}

/** Longer than any Slack command line; parsing is linear, this only bounds the work. */
const MAX_LENGTH = 4000;

type Tree = ReturnType<typeof parser.parse>;
type SyntaxNode = Tree['topNode'];

interface Matcher {
  readonly name: string;
  readonly op: string;
  readonly value: string;
  readonly text: string;
}

function refuse(message: string): never {
  throw new ValidationError('promql', 'scoped to the project', message);
}

/**
 * The expression with `label="value"` on every vector selector; throws a ValidationError whose message
 * is one sentence (what, why, how to fix) for an expression that cannot be limited to the project.
 */
export function scopePromql(expr: string, scope: PromqlScope): string {
  if (expr.trim() === '')
    refuse('The PromQL expression is empty: give one, e.g. `avg(DCGM_FI_DEV_GPU_UTIL)`.');
  if (expr.length > MAX_LENGTH) {
    refuse(
      `The PromQL expression is ${expr.length} characters long: gpuops takes at most ${MAX_LENGTH}; shorten it.`,
    );
  }
  const tree = readable(expr);
  const inserts: Array<{ at: number; text: string }> = [];
  const wanted = `${scope.label}="${escapePromqlString(scope.value)}"`;
  for (const selector of selectorsOf(tree)) {
    const matchers = selector.getChild('LabelMatchers');
    const own = matchersOf(expr, matchers).filter((m) => m.name === scope.label);
    for (const m of own) {
      if (m.op !== '=' || m.value !== scope.value) {
        refuse(
          `The query's matcher \`${m.text}\` reaches beyond this channel's project: gpuops limits every selector to ${scope.label}="${scope.value}" itself, so leave ${scope.label} out of the query.`,
        );
      }
    }
    if (own.length > 0) continue;
    if (matchers === null) {
      inserts.push({ at: selector.to, text: `{${wanted}}` });
      continue;
    }
    const items = matcherNodes(matchers);
    const last = items[items.length - 1];
    inserts.push(last ? { at: last.to, text: `, ${wanted}` } : { at: matchers.from + 1, text: wanted });
  }
  let scoped = expr;
  for (const { at, text } of inserts.sort((a, b) => b.at - a.at)) {
    scoped = scoped.slice(0, at) + text + scoped.slice(at);
  }
  assertScoped(scoped, scope);
  return scoped;
}

/** The parse tree, or a refusal pointing at where the grammar stopped making sense of the text. */
function readable(expr: string): Tree {
  const tree = parser.parse(expr);
  let error: number | undefined;
  tree.iterate({
    enter(node) {
      if (error !== undefined) return false;
      if (node.type.isError) error = node.from;
      return undefined;
    },
  });
  if (error !== undefined) {
    const where =
      error >= expr.trimEnd().length
        ? 'it stops before it is complete (an unclosed bracket or quote?)'
        : `near \`${expr.slice(Math.max(0, error - 20), error + 10).trim()}\` (character ${error + 1})`;
    refuse(
      `gpuops could not read the PromQL expression: ${where}, so it cannot limit it to this channel's project; check brackets, quotes and operators and try again.`,
    );
  }
  return tree;
}

function selectorsOf(tree: Tree): SyntaxNode[] {
  const found: SyntaxNode[] = [];
  tree.iterate({
    enter(node) {
      if (node.name === 'VectorSelector') found.push(node.node);
    },
  });
  return found;
}

function matcherNodes(matchers: SyntaxNode): SyntaxNode[] {
  const out: SyntaxNode[] = [];
  for (let child = matchers.firstChild; child !== null; child = child.nextSibling) {
    if (
      child.name === 'UnquotedLabelMatcher' ||
      child.name === 'QuotedLabelMatcher' ||
      child.name === 'QuotedLabelName'
    ) {
      out.push(child);
    }
  }
  return out;
}

/** The label matchers of a selector with their names and values read as Prometheus reads them. */
function matchersOf(expr: string, matchers: SyntaxNode | null): Matcher[] {
  if (matchers === null) return [];
  const out: Matcher[] = [];
  for (const node of matcherNodes(matchers)) {
    const text = expr.slice(node.from, node.to);
    if (node.name === 'QuotedLabelName') {
      // `{"metric.name"}`: a metric name in quotes, not a matcher on a label.
      continue;
    }
    const nameNode =
      node.getChild('LabelName') ?? node.getChild('QuotedLabelName')?.getChild('StringLiteral');
    const op = node.getChild('MatchOp');
    const value = node.getChild('StringLiteral');
    if (!nameNode || !op || !value)
      refuse(`gpuops could not read the label matcher \`${text}\`: write it as label="value".`);
    const rawName = expr.slice(nameNode.from, nameNode.to);
    out.push({
      name: nameNode.name === 'LabelName' ? rawName : unquote(rawName),
      op: expr.slice(op.from, op.to),
      value: unquote(expr.slice(value.from, value.to)),
      text,
    });
  }
  return out;
}

const SIMPLE_ESCAPES: Readonly<Record<string, string>> = {
  a: '\x07',
  b: '\b',
  f: '\f',
  n: '\n',
  r: '\r',
  t: '\t',
  v: '\v',
  '\\': '\\',
  '"': '"',
  "'": "'",
};

/** A PromQL string literal's value (Go's quoting rules); refuses escapes it does not know. */
export function unquote(literal: string): string {
  const quote = literal[0];
  const body = literal.slice(1, -1);
  if (quote === '`') return body;
  let out = '';
  for (let i = 0; i < body.length; i++) {
    const c = body[i]!;
    if (c !== '\\') {
      out += c;
      continue;
    }
    const next = body[i + 1] ?? '';
    const simple = SIMPLE_ESCAPES[next];
    if (simple !== undefined) {
      out += simple;
      i += 1;
      continue;
    }
    const hex = { x: 2, u: 4, U: 8 }[next];
    const digits = hex ? body.slice(i + 2, i + 2 + hex) : body.slice(i + 1, i + 4);
    const code = hex
      ? /^[0-9a-fA-F]+$/.test(digits) && digits.length === hex && Number.parseInt(digits, 16)
      : /^[0-7]{3}$/.test(digits) && Number.parseInt(digits, 8);
    if (code === false || code > 0x10ffff) {
      refuse(
        `gpuops could not read the string ${literal} in the query: use plain text or the escapes \\n, \\t, \\\\ and \\".`,
      );
    }
    out += String.fromCodePoint(code);
    i += hex ? 1 + hex : 3;
  }
  return out;
}

/** The rewritten expression parses cleanly and every selector carries the project matcher, or nothing is sent. */
function assertScoped(scoped: string, scope: PromqlScope): void {
  const tree = parser.parse(scoped);
  let sound = true;
  tree.iterate({
    enter(node) {
      if (node.type.isError) sound = false;
      if (node.name !== 'VectorSelector') return;
      const own = matchersOf(scoped, node.node.getChild('LabelMatchers')).filter(
        (m) => m.name === scope.label,
      );
      if (own.length === 0 || own.some((m) => m.op !== '=' || m.value !== scope.value)) sound = false;
    },
  });
  if (!sound) {
    refuse(
      "gpuops could not limit this PromQL expression to the channel's project, so it was not sent: simplify it and try again.",
    );
  }
}
