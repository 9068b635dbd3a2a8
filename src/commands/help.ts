import type { RouteTable } from '../cloud/routes.js';
import { ROUTES } from '../cloud/routes.js';
import { SIZE_RULE, USERNAME_RULE } from '../cloud/rules.js';
import type { Shape } from '../cloud/shape.js';
import type { ParseError } from './arg-reader.js';
import { kindsMissingIn, missingAbility } from './availability.js';
import {
  commandPath,
  type GpuCommandKind,
  HELP_TOPICS,
  SPECS_IN_HELP_ORDER,
  specsOfGroup,
} from './registry.js';
import { GROUPS } from './spec.js';
import { MAX_AUDIT, MAX_COUNT, MAX_WAITLIST_COUNT, NAME_RULE, RANGE_RULE } from './value-rules.js';

// Help as Slack mrkdwn sections. Each section stays within Slack's 3,000 characters per text block,
// so a renderer can put one section in one block.

export const SLACK_TEXT_LIMIT = 3000;

/** Escapes the three characters Slack mrkdwn gives meaning to, for text that came from a person. */
export function escapeMrkdwn(text: string): string {
  return text.replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;');
}

export interface HelpOptions {
  /** Hides (overview) or marks (topic help) the subcommands this cloud cannot serve. */
  readonly shape?: Shape;
  /** The effective route table when CLOUD_ROUTES changes the shape's. */
  readonly routes?: RouteTable;
}

function missingKinds(options: HelpOptions): ReadonlySet<GpuCommandKind> {
  if (options.shape === undefined) return new Set();
  return new Set(kindsMissingIn(options.shape, options.routes));
}

/** What a help line shows of a spec. */
type HelpLine = Pick<ReturnType<typeof specsOfGroup>[number], 'kind' | 'usage' | 'summary' | 'example'>;

function tableOf(options: HelpOptions): RouteTable | undefined {
  if (options.shape === undefined) return undefined;
  return options.routes ?? ROUTES[options.shape];
}

function line(doc: HelpLine, missing: ReadonlySet<GpuCommandKind>, options: HelpOptions): string {
  const table = tableOf(options);
  const why = missing.has(doc.kind) && table ? missingAbility(doc.kind, table) : undefined;
  const note = why ? ` _(does not work with this cloud: its API cannot ${why})_` : '';
  return `• \`${escapeMrkdwn(doc.usage)}\` — ${escapeMrkdwn(doc.summary)}${note}`;
}

/** The one line under the overview naming what it left out and why. */
function hiddenLine(missing: ReadonlySet<GpuCommandKind>, options: HelpOptions): string | undefined {
  const table = tableOf(options);
  if (missing.size === 0 || !table) return undefined;
  const paths = [...missing].map((kind) => `\`${commandPath(kind)}\``);
  const abilities = [...new Set([...missing].map((kind) => missingAbility(kind, table)))].filter(
    (a) => a !== undefined,
  );
  return `_Not shown: ${paths.join(', ')}. This cloud's API cannot ${abilities.join(', ')}; use its own console or CLI for those._`;
}

/** Packs lines into sections no longer than the limit, never splitting a line. */
export function packSections(lines: readonly string[], limit = SLACK_TEXT_LIMIT): string[] {
  const sections: string[] = [];
  let current = '';
  for (const text of lines) {
    const piece = text.length > limit ? `${text.slice(0, limit - 1)}…` : text;
    if (current !== '' && current.length + 1 + piece.length > limit) {
      sections.push(current);
      current = '';
    }
    current = current === '' ? piece : `${current}\n${piece}`;
  }
  if (current !== '') sections.push(current);
  return sections;
}

export const VALUE_RULES: readonly string[] = [
  `• *Names* (instances, clusters, pools, keys, filesystems, types): ${NAME_RULE}. Instances and clusters also take their id.`,
  `• *Counts*: whole numbers from 1 to ${MAX_COUNT} (node pools), 1 to ${MAX_WAITLIST_COUNT} (waitlist); \`/gpu audit\` takes 1 to ${MAX_AUDIT}.`,
  `• *Ranges*: ${RANGE_RULE}; the default is 1h.`,
  `• *Sizes*: ${SIZE_RULE}.`,
  '• *Versions*: v1.31 or v1.31.2 (a missing v is added).',
  `• *Usernames*: ${USERNAME_RULE}.`,
  '• *Quoting*: "double", \'single\' and Slack’s “smart” quotes group words; flags take `--flag value` or `--flag=value`.',
];

function overview(options: HelpOptions): string[] {
  const missing = missingKinds(options);
  const intro = [
    '*`/gpu` — GPU cloud from Slack*',
    'Type a subcommand after `/gpu`. Arguments in [brackets] are optional; commands marked “a form” open a dialog when given no arguments. `/gpu help &lt;subcommand&gt;` shows an example.',
  ].join('\n');
  const sections = [intro];
  for (const group of GROUPS) {
    const shown = specsOfGroup(group.key).filter((doc) => !missing.has(doc.kind));
    if (shown.length === 0) continue;
    sections.push(...packSections([`*${group.title}*`, ...shown.map((doc) => line(doc, missing, options))]));
  }
  sections.push(...packSections(['*Values*', ...VALUE_RULES]));
  const hidden = hiddenLine(missing, options);
  if (hidden) sections.push(...packSections([hidden]));
  return sections;
}

function docsForTopic(topic: string): HelpLine[] {
  return SPECS_IN_HELP_ORDER.filter((doc) => {
    const path = commandPath(doc.kind);
    return path === topic || path.startsWith(`${topic} `);
  });
}

/**
 * Help as mrkdwn sections: the overview (several sections) without a topic, or the usage, summary
 * and an example of every subcommand under a topic (`k8s`, `k8s pool`, `create`).
 */
export function helpText(topic?: string, options: HelpOptions = {}): string[] {
  const key = topic?.trim().toLowerCase().replace(/\s+/g, ' ');
  if (key === undefined || key === '' || !HELP_TOPICS.includes(key)) return overview(options);
  const missing = missingKinds(options);
  const lines = [`*\`/gpu ${key}\`*`];
  for (const doc of docsForTopic(key)) {
    lines.push(line(doc, missing, options), `    Example: \`${escapeMrkdwn(doc.example)}\``);
  }
  return packSections(lines);
}

/** The usage line(s) of a subcommand given by kind (`k8s.pool.add`) or words (`k8s pool add`, `k8s`). */
export function usageFor(subcommand: string): string | undefined {
  const key = subcommand.trim().toLowerCase().replaceAll('.', ' ').replace(/\s+/g, ' ');
  const docs = docsForTopic(key);
  return docs.length > 0 ? docs.map((doc) => doc.usage).join('\n') : undefined;
}

/** A parse error as one mrkdwn text: what went wrong, the suggestion, the syntax and an example. */
export function formatParseError(error: ParseError): string {
  const usage = error.usage
    .split('\n')
    .map((u) => `\`${escapeMrkdwn(u)}\``)
    .join('\n');
  const text = [
    escapeMrkdwn(error.message),
    ...(error.suggestion ? [escapeMrkdwn(error.suggestion)] : []),
    `*Usage:* ${usage}`,
    `*Example:* \`${escapeMrkdwn(error.example)}\``,
  ].join('\n');
  return text.length > SLACK_TEXT_LIMIT ? `${text.slice(0, SLACK_TEXT_LIMIT - 1)}…` : text;
}
