// Draws Slack messages and modals as terminal text, the way a person would read them in Slack: mrkdwn
// decoded (mentions, links, dates, escapes, emoji), sections, fields, context, dividers, headers, images
// and numbered buttons. Pure: the local Slack API (src/chat/local-slack-api.ts) does the printing.

import { slackDateText } from './slack-date-text.js';

/** How emphasis is shown: ANSI on a terminal, plain text in transcripts and tests. */
export interface TerminalStyle {
  readonly bold: (text: string) => string;
  readonly italic: (text: string) => string;
  readonly dim: (text: string) => string;
  readonly code: (text: string) => string;
  readonly strike: (text: string) => string;
}

const same = (text: string): string => text;

export const PLAIN_STYLE: TerminalStyle = {
  bold: same,
  italic: same,
  dim: same,
  code: (text) => `\`${text}\``,
  strike: (text) => `~${text}~`,
};

const ansi =
  (open: number, close: number) =>
  (text: string): string =>
    `\u001b[${open}m${text}\u001b[${close}m`;

export const ANSI_STYLE: TerminalStyle = {
  bold: ansi(1, 22),
  italic: ansi(3, 23),
  dim: ansi(2, 22),
  code: ansi(36, 39),
  strike: ansi(9, 29),
};

/** Slack emoji codes the bot uses, as the characters Slack shows; others stay as `:name:`. */
export const EMOJI: Readonly<Record<string, string>> = {
  white_check_mark: '✅',
  x: '❌',
  gear: '⚙️',
  hourglass: '⌛',
  hourglass_flowing_sand: '⏳',
  mag: '🔍',
  warning: '⚠️',
  envelope: '✉️',
  large_green_circle: '🟢',
  red_circle: '🔴',
  white_circle: '⚪',
  large_yellow_circle: '🟡',
  grey_question: '❔',
  key: '🔑',
  wastebasket: '🗑️',
  round_pushpin: '📍',
  desktop_computer: '🖥️',
  file_cabinet: '🗄️',
  wheel_of_dharma: '☸️',
  no_entry: '⛔',
  no_entry_sign: '🚫',
  lock: '🔒',
  bell: '🔔',
  money_with_wings: '💸',
  moneybag: '💰',
  heavy_check_mark: '✔️',
  thumbsup: '👍',
  '+1': '👍',
  thumbsdown: '👎',
  '-1': '👎',
  rocket: '🚀',
  stopwatch: '⏱️',
  zzz: '💤',
  chart_with_upwards_trend: '📈',
  information_source: 'ℹ️',
  bulb: '💡',
  clipboard: '📋',
  calendar: '📅',
  alarm_clock: '⏰',
  paperclip: '📎',
  frame_with_picture: '🖼️',
  raised_hand: '✋',
  octagonal_sign: '🛑',
  tada: '🎉',
  sparkles: '✨',
  ship: '🚢',
  ok_hand: '👌',
  newspaper: '📰',
  eyes: '👀',
  card_file_box: '🗃️',
  arrow_forward: '▶️',
  double_vertical_bar: '⏸️',
};

/** Names for the ids mrkdwn mentions, and the style to draw with. */
export interface RenderContext {
  readonly style: TerminalStyle;
  /** Display name of a user id (shown as @name), if known. */
  readonly userName?: (id: string) => string | undefined;
  /** Name of a channel id (shown as #name), if known. */
  readonly channelName?: (id: string) => string | undefined;
  /** Where a Slack-hosted file of an image block was saved, if it was. */
  readonly filePath?: (id: string) => string | undefined;
  /** The reader's time zone: `<!date^…>` is drawn in it, as Slack does; without it, the fallback. */
  readonly timeZone?: () => string | undefined;
  readonly now?: () => number;
}

/** A button as drawn: its number, and what pressing it sends back. */
export interface RenderedButton {
  readonly number: number;
  readonly text: string;
  readonly actionId: string;
  readonly blockId?: string | undefined;
  readonly value?: string | undefined;
  readonly url?: string | undefined;
  readonly style?: string | undefined;
}

export interface Rendered {
  readonly lines: string[];
  readonly buttons: RenderedButton[];
}

export type Json = Record<string, unknown>;
export const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);
export const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);

function unescapeEntities(text: string): string {
  return text.replaceAll('&lt;', '<').replaceAll('&gt;', '>').replaceAll('&amp;', '&');
}

function emojify(text: string): string {
  return text.replace(/:([a-z0-9_+-]+):/g, (all, name: string) => EMOJI[name] ?? all);
}

/** One `<…>` of mrkdwn: a mention, a channel, a special mention, a date or a link. */
function decodeAngle(inner: string, ctx: RenderContext): string {
  const [target = '', label] = splitOnce(inner, '|');
  if (target.startsWith('@')) {
    const id = target.slice(1);
    return `@${label ?? ctx.userName?.(id) ?? id}`;
  }
  if (target.startsWith('#')) {
    const id = target.slice(1);
    return `#${label ?? ctx.channelName?.(id) ?? id}`;
  }
  if (target.startsWith('!subteam^')) return label ?? `@${target.slice('!subteam^'.length)}`;
  if (target.startsWith('!date^')) {
    const tz = ctx.timeZone?.();
    const shown = tz ? slackDateText(target, tz, ctx.now?.() ?? Date.now()) : undefined;
    return shown ?? label ?? target;
  }
  if (target.startsWith('!')) return `@${label ?? target.slice(1)}`;
  if (label !== undefined && label !== target) return `${label} (${target})`;
  return target;
}

function splitOnce(text: string, sep: string): [string, string | undefined] {
  const at = text.indexOf(sep);
  return at < 0 ? [text, undefined] : [text.slice(0, at), text.slice(at + 1)];
}

/** Inline emphasis of one line that is not code: *bold*, _italic_, ~strike~. */
function emphasis(text: string, style: TerminalStyle): string {
  const around = (mark: string) =>
    new RegExp(
      `(^|[\\s(\\[>:,.])\\${mark}([^\\s${mark}](?:[^\\n]*?[^\\s${mark}])?)\\${mark}(?=$|[\\s).,:;!?\\]'"])`,
      'g',
    );
  return text
    .replace(around('*'), (_m, pre: string, inner: string) => `${pre}${style.bold(inner)}`)
    .replace(around('_'), (_m, pre: string, inner: string) => `${pre}${style.italic(inner)}`)
    .replace(around('~'), (_m, pre: string, inner: string) => `${pre}${style.strike(inner)}`);
}

/** Private-use characters around the number of a code span set aside while a line is decoded. */
const SPAN_OPEN = '\uE000';
const SPAN_CLOSE = '\uE001';
const SPAN = /\uE000(\d+)\uE001/g;

/** Decodes links, mentions and entities of a text whose code spans are set aside. */
function decodeInline(text: string, ctx: RenderContext): string {
  const decoded = text.replace(/<([^<>\n]+)>/g, (_m, inner: string) => decodeAngle(inner, ctx));
  return emojify(unescapeEntities(emphasis(decoded, ctx.style)));
}

/**
 * Slack mrkdwn as terminal lines. Code blocks (```) are indented under a bar and left as typed;
 * `inline code` is kept; quotes (>) get a bar.
 */
export function mrkdwnLines(text: string, ctx: RenderContext): string[] {
  const out: string[] = [];
  const parts = text.split('```');
  parts.forEach((part, i) => {
    if (i % 2 === 1) {
      const body = unescapeEntities(part.replace(/^\n/, '').replace(/\n$/, ''));
      for (const line of body.split('\n')) out.push(`  │ ${line}`);
      return;
    }
    if (part === '') return;
    const lines = part.split('\n');
    // A code block's neighbours carry its line breaks; they are not lines of their own.
    if (i > 0 && lines[0] === '') lines.shift();
    if (i < parts.length - 1 && lines.at(-1) === '') lines.pop();
    for (const line of lines) {
      const quote = /^(&gt;|>)\s?/.exec(line);
      const body = quote ? line.slice(quote[0].length) : line;
      // Backticks pair up into code spans; an unpaired last one is just a backtick. Code spans stand
      // in as placeholders while the rest is decoded, so emphasis around them (*`/gpu create`*,
      // a help header) is drawn as emphasis instead of showing its asterisks.
      const pieces = body.split('`');
      const balanced = pieces.length % 2 === 1;
      const spans: string[] = [];
      const masked = pieces
        .map((piece, j) => {
          if (j % 2 === 0) return piece;
          if (balanced || j < pieces.length - 1) {
            spans.push(ctx.style.code(unescapeEntities(piece)));
            return `${SPAN_OPEN}${spans.length - 1}${SPAN_CLOSE}`;
          }
          return `\`${piece}`;
        })
        .join('');
      const rendered = decodeInline(masked, ctx).replace(SPAN, (_m, n: string) => spans[Number(n)]!);
      out.push(quote ? `┃ ${rendered}` : rendered);
    }
  });
  return out;
}

/** Text of a text object (plain_text or mrkdwn) as lines. */
function textObjectLines(value: unknown, ctx: RenderContext): string[] {
  if (!isObject(value)) return typeof value === 'string' ? mrkdwnLines(value, ctx) : [];
  const text = str(value.text) ?? '';
  if (value.type === 'plain_text') return text.split('\n').map((line) => emojify(line));
  return mrkdwnLines(text, ctx);
}

export function oneLine(value: unknown, ctx: RenderContext): string {
  return textObjectLines(value, ctx).join(' ');
}

function button(element: Json, blockId: string | undefined, number: number, ctx: RenderContext) {
  const text = oneLine(element.text, ctx) || str(element.action_id) || 'button';
  const rendered: RenderedButton = {
    number,
    text,
    actionId: str(element.action_id) ?? '',
    blockId,
    value: str(element.value),
    url: str(element.url),
    style: str(element.style),
  };
  const label = `[${number}] ${rendered.style === 'primary' ? ctx.style.bold(text) : text}`;
  return { rendered, label: rendered.url ? `${label} → ${rendered.url}` : label };
}

/** An element that is not a button, said in words (menus and pickers cannot be used from here). */
function describeElement(element: Json, ctx: RenderContext): string {
  const type = str(element.type) ?? 'element';
  const placeholder = isObject(element.placeholder) ? oneLine(element.placeholder, ctx) : '';
  return `(${type.replaceAll('_', ' ')}${placeholder ? `: ${placeholder}` : ''})`;
}

function imageLine(element: Json, ctx: RenderContext): string {
  const alt = str(element.alt_text) ?? '';
  const file = isObject(element.slack_file) ? element.slack_file : undefined;
  const where =
    str(element.image_url) ??
    (file ? (ctx.filePath?.(str(file.id) ?? '') ?? str(file.url) ?? str(file.id)) : undefined) ??
    '';
  const title = isObject(element.title) ? oneLine(element.title, ctx) : '';
  return `🖼  ${[title, alt].filter((t) => t !== '').join(' — ') || 'image'}${where ? `: ${where}` : ''}`;
}

function richTextLines(element: unknown): string {
  if (!isObject(element)) return '';
  if (typeof element.text === 'string') return element.text;
  if (element.type === 'user') return `@${str(element.user_id) ?? ''}`;
  if (element.type === 'link') return str(element.text) ?? str(element.url) ?? '';
  if (element.type === 'emoji') return EMOJI[str(element.name) ?? ''] ?? `:${str(element.name)}:`;
  return Array.isArray(element.elements) ? element.elements.map(richTextLines).join('') : '';
}

/**
 * Blocks as terminal lines, buttons numbered from `firstButton` on. Unknown blocks are named, never
 * dropped silently.
 */
export function renderBlocks(blocks: readonly unknown[], ctx: RenderContext, firstButton = 1): Rendered {
  const lines: string[] = [];
  const buttons: RenderedButton[] = [];
  const next = () => firstButton + buttons.length;
  for (const block of blocks) {
    if (!isObject(block)) continue;
    const blockId = str(block.block_id);
    switch (block.type) {
      case 'section': {
        lines.push(...textObjectLines(block.text, ctx));
        if (Array.isArray(block.fields)) {
          // Slack shows a field's label above its value; one line "label: value" reads the same here.
          for (const field of block.fields) {
            const [first = '', ...rest] = textObjectLines(field, ctx);
            if (rest.length === 1 && !/[:.!?]$/.test(first)) lines.push(`  ${first}: ${rest[0]}`);
            else lines.push(`  ${first}`, ...rest.map((line) => `    ${line}`));
          }
        }
        const accessory = isObject(block.accessory) ? block.accessory : undefined;
        if (accessory?.type === 'button') {
          const b = button(accessory, blockId, next(), ctx);
          buttons.push(b.rendered);
          lines.push(`  ${b.label}`);
        } else if (accessory?.type === 'image') {
          lines.push(`  ${imageLine(accessory, ctx)}`);
        } else if (accessory) {
          lines.push(`  ${describeElement(accessory, ctx)}`);
        }
        break;
      }
      case 'header':
        lines.push(ctx.style.bold(oneLine(block.text, ctx)));
        break;
      case 'divider':
        lines.push('────────────────────────────────────────');
        break;
      case 'context': {
        const parts = (Array.isArray(block.elements) ? block.elements : []).map((e) =>
          isObject(e) && e.type === 'image' ? `🖼  ${str(e.alt_text) ?? ''}` : oneLine(e, ctx),
        );
        lines.push(ctx.style.dim(parts.join('  ')));
        break;
      }
      case 'image':
        lines.push(imageLine(block, ctx));
        break;
      case 'actions': {
        const labels: string[] = [];
        for (const element of Array.isArray(block.elements) ? block.elements : []) {
          if (!isObject(element)) continue;
          if (element.type === 'button') {
            const b = button(element, blockId, next(), ctx);
            buttons.push(b.rendered);
            labels.push(b.label);
          } else {
            labels.push(describeElement(element, ctx));
          }
        }
        lines.push(labels.join('  '));
        break;
      }
      case 'input': {
        const label = oneLine(block.label, ctx);
        const element = isObject(block.element) ? block.element : {};
        lines.push(`${label}${block.optional === true ? '' : ' *'} ${describeElement(element, ctx)}`);
        break;
      }
      case 'rich_text':
        lines.push(...richTextLines(block).split('\n'));
        break;
      case 'file':
        lines.push(`📎 file ${str(block.file_id) ?? ''}`);
        break;
      default:
        lines.push(ctx.style.dim(`(a ${str(block.type) ?? 'unknown'} block)`));
    }
  }
  return { lines, buttons };
}

export interface MessageContent {
  readonly text?: string | undefined;
  readonly blocks?: readonly unknown[] | undefined;
  /** Files shared with the message: their title and where they were saved. */
  readonly files?: readonly { readonly title: string; readonly path: string }[];
}

/** A message body: its blocks, or its text when it has none (as Slack shows it), then its files. */
export function renderMessage(message: MessageContent, ctx: RenderContext, firstButton = 1): Rendered {
  const body =
    message.blocks && message.blocks.length > 0
      ? renderBlocks(message.blocks, ctx, firstButton)
      : { lines: mrkdwnLines(message.text ?? '', ctx), buttons: [] };
  const files = (message.files ?? []).map((f) => `📎 ${f.title} saved to ${f.path}`);
  return { lines: [...body.lines, ...files], buttons: body.buttons };
}
