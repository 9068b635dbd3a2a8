// Draws Slack messages and modals as terminal text, the way a person would read them in Slack: mrkdwn
// decoded (mentions, links, dates, escapes, emoji), sections, fields, context, dividers, headers, images
// and numbered buttons. Pure: the local Slack API (src/chat/local-slack-api.ts) does the printing.

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

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);
const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);

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
  if (target.startsWith('!date^')) return label ?? target;
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

/** Decodes links, mentions and entities of a text that has no code spans. */
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
      // Backticks pair up into code spans; an unpaired last one is just a backtick.
      const pieces = body.split('`');
      const balanced = pieces.length % 2 === 1;
      const rendered = pieces
        .map((piece, j) => {
          if (j % 2 === 0) return decodeInline(piece, ctx);
          if (balanced || j < pieces.length - 1) return ctx.style.code(unescapeEntities(piece));
          return decodeInline(`\`${piece}`, ctx);
        })
        .join('');
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

function oneLine(value: unknown, ctx: RenderContext): string {
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

// ---------- modals ----------

export interface FieldOption {
  readonly text: string;
  readonly value: string;
  /** The option group it is listed under, if any. */
  readonly group?: string | undefined;
}

export type FieldKind = 'text' | 'number' | 'select' | 'multi_select' | 'checkboxes' | 'radio' | 'other';

/** One input block of a modal, as the terminal form asks for it. */
export interface FormField {
  readonly blockId: string;
  readonly actionId: string;
  readonly elementType: string;
  readonly kind: FieldKind;
  readonly label: string;
  readonly optional: boolean;
  readonly multiline: boolean;
  readonly hint?: string | undefined;
  readonly placeholder?: string | undefined;
  readonly options: readonly FieldOption[];
  /** The initial value: text for text and number fields, option values for the choices. */
  readonly initial?: string | undefined;
  readonly initialOptions: readonly string[];
}

const KINDS: Readonly<Record<string, FieldKind>> = {
  plain_text_input: 'text',
  email_text_input: 'text',
  url_text_input: 'text',
  number_input: 'number',
  static_select: 'select',
  radio_buttons: 'radio',
  multi_static_select: 'multi_select',
  checkboxes: 'checkboxes',
};

function optionsOf(element: Json, ctx: RenderContext): FieldOption[] {
  const plainOf = (o: unknown, group?: string): FieldOption[] =>
    isObject(o) && typeof o.value === 'string'
      ? [{ text: oneLine(o.text, ctx), value: o.value, ...(group ? { group } : {}) }]
      : [];
  if (Array.isArray(element.option_groups)) {
    return element.option_groups.flatMap((g) =>
      isObject(g) && Array.isArray(g.options)
        ? g.options.flatMap((o) => plainOf(o, oneLine(g.label, ctx)))
        : [],
    );
  }
  return Array.isArray(element.options) ? element.options.flatMap((o) => plainOf(o)) : [];
}

/** The input blocks of a view, in order, with what the terminal needs to ask for each. */
export function formFields(view: Json, ctx: RenderContext): FormField[] {
  const blocks = Array.isArray(view.blocks) ? view.blocks : [];
  return blocks.flatMap((block): FormField[] => {
    if (!isObject(block) || block.type !== 'input' || !isObject(block.element)) return [];
    const element = block.element;
    const elementType = str(element.type) ?? 'unknown';
    const initialOption = isObject(element.initial_option) ? str(element.initial_option.value) : undefined;
    const initialOptions = [
      ...(initialOption ? [initialOption] : []),
      ...(Array.isArray(element.initial_options)
        ? element.initial_options.flatMap((o) =>
            isObject(o) && typeof o.value === 'string' ? [o.value] : [],
          )
        : []),
    ];
    return [
      {
        blockId: str(block.block_id) ?? '',
        actionId: str(element.action_id) ?? '',
        elementType,
        kind: KINDS[elementType] ?? 'other',
        label: oneLine(block.label, ctx),
        optional: block.optional === true,
        multiline: element.multiline === true,
        hint: isObject(block.hint) ? oneLine(block.hint, ctx) : undefined,
        placeholder: isObject(element.placeholder) ? oneLine(element.placeholder, ctx) : undefined,
        options: optionsOf(element, ctx),
        initial: str(element.initial_value),
        initialOptions,
      },
    ];
  });
}

/** The modal's title and buttons, and its blocks other than inputs (those become prompts). */
export function renderView(view: Json, ctx: RenderContext, firstButton = 1): Rendered {
  const title = oneLine(view.title, ctx);
  const submit = isObject(view.submit) ? oneLine(view.submit, ctx) : undefined;
  const close = isObject(view.close) ? oneLine(view.close, ctx) : 'Cancel';
  const blocks = (Array.isArray(view.blocks) ? view.blocks : []).filter(
    (b) => !(isObject(b) && b.type === 'input'),
  );
  const body = renderBlocks(blocks, ctx, firstButton);
  const head = `${ctx.style.bold(`▣ ${title}`)}  ${ctx.style.dim(submit ? `(${submit} · ${close})` : `(${close})`)}`;
  return { lines: [head, ...body.lines.map((line) => `│ ${line}`)], buttons: body.buttons };
}

/** The question for one field, with its options numbered and what Enter keeps. */
export function fieldPrompt(field: FormField): { lines: string[]; prompt: string } {
  const lines: string[] = [];
  const required = field.optional ? 'optional' : 'required';
  lines.push(`${field.label} (${required})${field.hint ? ` — ${field.hint}` : ''}`);
  let group: string | undefined;
  field.options.forEach((option, i) => {
    if (option.group !== undefined && option.group !== group) {
      group = option.group;
      lines.push(`   ${group}:`);
    }
    const picked = field.initialOptions.includes(option.value) ? ' (chosen)' : '';
    lines.push(`   ${String(i + 1).padStart(2)}) ${option.text}${picked}`);
  });
  const how: Record<FieldKind, string> = {
    text: field.multiline ? 'text, \\n for a new line' : 'text',
    number: 'a number',
    select: 'a number from the list',
    radio: 'a number from the list',
    multi_select: 'numbers from the list, comma-separated; - for none',
    checkboxes: 'numbers from the list, comma-separated; - for none',
    other: 'text',
  };
  const keeps = keptValue(field);
  const enter =
    keeps !== undefined ? `, Enter keeps ${keeps}` : field.optional ? ', Enter leaves it empty' : '';
  return {
    lines,
    prompt: `  ${field.placeholder ? `${field.placeholder} — ` : ''}${how[field.kind]}${enter}> `,
  };
}

function keptValue(field: FormField): string | undefined {
  if (field.kind === 'text' || field.kind === 'number' || field.kind === 'other') {
    return field.initial !== undefined && field.initial !== '' ? `"${field.initial}"` : undefined;
  }
  if (field.initialOptions.length === 0) return undefined;
  return field.initialOptions
    .map((value) => field.options.find((o) => o.value === value)?.text ?? value)
    .join(', ');
}

/** One element's entry in `view.state.values`, as Slack sends it with a view_submission. */
export type StateValue = Readonly<Record<string, unknown>>;

export type FieldAnswer =
  | { readonly ok: true; readonly state: StateValue }
  | { readonly ok: false; readonly error: string };

function optionState(option: FieldOption): Json {
  return { text: { type: 'plain_text', text: option.text, emoji: true }, value: option.value };
}

function pickOption(field: FormField, token: string): FieldOption | undefined {
  const t = token.trim();
  if (/^\d+$/.test(t)) return field.options[Number(t) - 1];
  return field.options.find((o) => o.value === t || o.text === t);
}

/**
 * What a typed answer means for a field, as the element's state Slack would send. An empty answer
 * keeps the initial value. Checks only what Slack's own client checks (a choice must exist, a number
 * must be a number, a required field must be filled); the bot checks the rest on submit.
 */
export function answerField(field: FormField, typed: string): FieldAnswer {
  const input = typed.trim();
  const type = field.elementType;
  switch (field.kind) {
    case 'select':
    case 'radio': {
      if (input === '') {
        const initial = field.options.find((o) => o.value === field.initialOptions[0]);
        if (initial) return { ok: true, state: { type, selected_option: optionState(initial) } };
        if (field.optional) return { ok: true, state: { type, selected_option: null } };
        return { ok: false, error: 'Please choose one of the options.' };
      }
      const option = pickOption(field, input);
      if (!option) return { ok: false, error: `"${input}" is not one of the options; type its number.` };
      return { ok: true, state: { type, selected_option: optionState(option) } };
    }
    case 'multi_select':
    case 'checkboxes': {
      let chosen: FieldOption[];
      if (input === '') chosen = field.options.filter((o) => field.initialOptions.includes(o.value));
      else if (input === '-') chosen = [];
      else {
        chosen = [];
        for (const token of input.split(',').filter((t) => t.trim() !== '')) {
          const option = pickOption(field, token);
          if (!option) return { ok: false, error: `"${token.trim()}" is not one of the options.` };
          if (!chosen.includes(option)) chosen.push(option);
        }
      }
      if (chosen.length === 0 && !field.optional) return { ok: false, error: 'Please choose at least one.' };
      return { ok: true, state: { type, selected_options: chosen.map(optionState) } };
    }
    case 'number': {
      const value = input === '' ? (field.initial ?? '') : input;
      if (value === '') {
        if (field.optional) return { ok: true, state: { type, value: null } };
        return { ok: false, error: 'Please enter a number.' };
      }
      if (!/^-?\d+(\.\d+)?$/.test(value)) return { ok: false, error: `"${value}" is not a number.` };
      return { ok: true, state: { type, value } };
    }
    default: {
      const raw =
        typed === '' ? (field.initial ?? '') : field.multiline ? typed.replaceAll('\\n', '\n') : typed;
      if (raw.trim() === '') {
        if (field.optional) return { ok: true, state: { type, value: null } };
        return { ok: false, error: 'Please fill this in.' };
      }
      return { ok: true, state: { type, value: raw } };
    }
  }
}
