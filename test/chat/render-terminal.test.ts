import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { KnownBlock } from '@slack/types';
import { describe, expect, it } from 'vitest';
import {
  answerField,
  type FormField,
  fieldPrompt,
  formFields,
  renderView,
} from '../../src/chat/render-form.js';
import {
  ANSI_STYLE,
  EMOJI,
  mrkdwnLines,
  PLAIN_STYLE,
  type RenderContext,
  renderBlocks,
  renderMessage,
} from '../../src/chat/render-terminal.js';
import {
  checkboxesInput,
  formModal,
  numberInput,
  section,
  selectInput,
  textInput,
} from '../../src/commands/forms/form-kit.js';
import { helpText } from '../../src/commands/help.js';
import { renderJobMessage } from '../../src/render/job-message.js';

// The terminal chat draws what Slack would show. These check the drawing of the Block Kit the bot
// really sends (job messages, approval-style cards, forms) and the reading of a form's answers back
// into the state Slack would submit.

const ctx: RenderContext = {
  style: PLAIN_STYLE,
  userName: (id) => ({ U0ADA: 'ada', U0BOB: 'bob' })[id],
  channelName: (id) => ({ C0GPUOPS: 'gpu-ops' })[id],
  filePath: (id) => (id === 'F1' ? '/tmp/demo/files/chart.png' : undefined),
};

describe('mrkdwn', () => {
  it('shows mentions, channels, links, dates and escapes as Slack does', () => {
    expect(
      mrkdwnLines(
        'Hi <@U0ADA>, see <#C0GPUOPS> and <https://x.example/a|the docs> &amp; <https://y.example> at <!date^1700000000^{date_short}|2023-11-14T22:13:20Z> <@U0NOBODY> <!here>',
        ctx,
      ),
    ).toEqual([
      'Hi @ada, see #gpu-ops and the docs (https://x.example/a) & https://y.example at 2023-11-14T22:13:20Z @U0NOBODY @here',
    ]);
  });

  it("draws a time the bot sends in the reader's own zone, as Slack does", () => {
    // The approval card's "expires" as the bot writes it: Nov 28 2026 19:30 UTC, read on Nov 27 at 20:00 UTC.
    const text = 'expires <!date^1795894200^{date_short_pretty} {time}|2026-11-28 19:30 UTC>';
    const now = () => Date.parse('2026-11-27T20:00:00Z');
    const inZone = (tz: string) => mrkdwnLines(text, { ...ctx, timeZone: () => tz, now });
    expect(inZone('Europe/London')).toEqual(['expires Tomorrow 19:30']);
    expect(inZone('America/New_York')).toEqual(['expires Tomorrow 14:30']);
    // In Tokyo it is already the 28th there, and the moment falls early on the 29th.
    expect(inZone('Asia/Tokyo')).toEqual(['expires Tomorrow 04:30']);
    const weekBefore = () => Date.parse('2026-11-20T12:00:00Z');
    expect(mrkdwnLines(text, { ...ctx, timeZone: () => 'Asia/Tokyo', now: weekBefore })).toEqual([
      'expires Nov 29, 2026 04:30',
    ]);
    expect(
      mrkdwnLines('<!date^1795894200^{date_num} {time_secs}|x> <!date^1795894200^{date_long}|x>', {
        ...ctx,
        timeZone: () => 'UTC',
        now,
      }),
    ).toEqual(['2026-11-28 19:30:00 Saturday, November 28th, 2026']);
  });

  it('drops emphasis marks in plain text, keeps code, and turns emoji codes into emoji', () => {
    expect(
      mrkdwnLines(':white_check_mark: *Done* · `/gpu start train-1` _now_ ~old~ :unknown_emoji:', ctx),
    ).toEqual(['✅ Done · `/gpu start train-1` now ~old~ :unknown_emoji:']);
    expect(mrkdwnLines('_8 × H100_SXM5_80GB at $2.89 per GPU-hour_', ctx)).toEqual([
      '8 × H100_SXM5_80GB at $2.89 per GPU-hour',
    ]);
    // Not emphasis: an asterisk inside a word or a formula.
    expect(mrkdwnLines('2 * 3 and a*b*c', ctx)).toEqual(['2 * 3 and a*b*c']);
  });

  it('uses ANSI styles on a terminal', () => {
    expect(mrkdwnLines('*Done* `code`', { ...ctx, style: ANSI_STYLE })).toEqual([
      '\u001b[1mDone\u001b[22m \u001b[36mcode\u001b[39m',
    ]);
  });

  it("draws /gpu help's headers (bold around code) as bold, not with their asterisks", () => {
    const lines = [...helpText(), ...helpText('create')].flatMap((text) => mrkdwnLines(text, ctx));
    expect(lines).toContain('`/gpu` — GPU cloud from Slack');
    expect(lines).toContain('`/gpu create`');
    expect(lines.filter((line) => /(^|\s)\*\S|\S\*($|\s)/.test(line))).toEqual([]);
    expect(mrkdwnLines('*`/gpu create`* and _`x` too_', { ...ctx, style: ANSI_STYLE })).toEqual([
      '\u001b[1m\u001b[36m/gpu create\u001b[39m\u001b[22m and \u001b[3m\u001b[36mx\u001b[39m too\u001b[23m',
    ]);
    // Code keeps its own characters: emphasis marks inside it are not emphasis.
    expect(mrkdwnLines('run `a *b* c` now', ctx)).toEqual(['run `a *b* c` now']);
  });

  it('indents code blocks under a bar and leaves their text as typed', () => {
    expect(mrkdwnLines('Summary:\n```GPU 0  *80*  <@U0ADA>\nGPU 1  &lt;1```\nend', ctx)).toEqual([
      'Summary:',
      '  │ GPU 0  *80*  <@U0ADA>',
      '  │ GPU 1  <1',
      'end',
    ]);
  });

  it('marks quotes', () => {
    expect(mrkdwnLines('&gt; quoted *line*\nplain', ctx)).toEqual(['┃ quoted line', 'plain']);
  });
});

describe('messages', () => {
  it('draws a job message as the channel shows it', () => {
    const { text, blocks } = renderJobMessage({
      phase: 'done',
      request: '/gpu start train-1',
      userId: 'U0ADA',
      detail: 'train-1 is running at 10.0.0.5.',
      startedAt: 0,
      now: 4_000,
      jobId: 'job-1',
    });
    expect(renderMessage({ text, blocks }, ctx).lines).toEqual([
      '✅ Done · `/gpu start train-1`',
      'train-1 is running at 10.0.0.5.',
      'requested by @ada · 4s elapsed · job job-1',
    ]);
  });

  it('shows fields as "label: value", headers, dividers, context and images', () => {
    const blocks: KnownBlock[] = [
      { type: 'header', text: { type: 'plain_text', text: 'train-1' } },
      {
        type: 'section',
        text: { type: 'mrkdwn', text: '*train-1*' },
        fields: [
          { type: 'mrkdwn', text: '*State*\n:large_green_circle: running' },
          { type: 'mrkdwn', text: '*Cost*\n$23.12/h\n_8 GPUs_' },
        ],
      },
      { type: 'divider' },
      { type: 'image', image_url: 'https://x.example/c.png', alt_text: 'GPU chart' },
      { type: 'image', slack_file: { id: 'F1' }, alt_text: 'uploaded chart' },
      {
        type: 'context',
        elements: [
          { type: 'mrkdwn', text: 'requested by <@U0BOB>' },
          { type: 'plain_text', text: 'job 7' },
        ],
      },
    ];
    expect(renderBlocks(blocks, ctx).lines).toEqual([
      'train-1',
      'train-1',
      '  State: 🟢 running',
      '  Cost',
      '    $23.12/h',
      '    8 GPUs',
      '────────────────────────────────────────',
      '🖼  GPU chart: https://x.example/c.png',
      '🖼  uploaded chart: /tmp/demo/files/chart.png',
      'requested by @bob  job 7',
    ]);
  });

  it('numbers buttons from the given number and says what pressing one sends', () => {
    const blocks: KnownBlock[] = [
      {
        type: 'section',
        block_id: 'top',
        text: { type: 'mrkdwn', text: 'Approve `/gpu create big-1`?' },
        accessory: { type: 'button', action_id: 'more', text: { type: 'plain_text', text: 'Details' } },
      },
      {
        type: 'actions',
        block_id: 'decide',
        elements: [
          {
            type: 'button',
            action_id: 'approve',
            value: 'apr-1',
            style: 'primary',
            text: { type: 'plain_text', text: 'Approve' },
          },
          {
            type: 'button',
            action_id: 'deny',
            value: 'apr-1',
            style: 'danger',
            text: { type: 'plain_text', text: 'Deny' },
          },
          { type: 'static_select', action_id: 'pick', placeholder: { type: 'plain_text', text: 'Pick' } },
        ],
      },
    ];
    const rendered = renderBlocks(blocks, ctx, 5);
    expect(rendered.lines).toEqual([
      'Approve `/gpu create big-1`?',
      '  [5] Details',
      '[6] Approve  [7] Deny  (static select: Pick)',
    ]);
    expect(rendered.buttons).toEqual([
      expect.objectContaining({ number: 5, text: 'Details', actionId: 'more', blockId: 'top' }),
      expect.objectContaining({
        number: 6,
        text: 'Approve',
        actionId: 'approve',
        value: 'apr-1',
        blockId: 'decide',
      }),
      expect.objectContaining({ number: 7, text: 'Deny', actionId: 'deny', style: 'danger' }),
    ]);
  });

  it('falls back to the text without blocks, lists saved files, and names blocks it cannot draw', () => {
    expect(
      renderMessage(
        { text: 'Chart for <@U0ADA>', files: [{ title: 'metrics-train-1.png', path: '/tmp/f/m.png' }] },
        ctx,
      ).lines,
    ).toEqual(['Chart for @ada', '📎 metrics-train-1.png saved to /tmp/f/m.png']);
    expect(renderBlocks([{ type: 'video', title: { type: 'plain_text', text: 'x' } }], ctx).lines).toEqual([
      '(a video block)',
    ]);
  });
});

describe('forms', () => {
  const metadata = { v: 1, form: 'create', channelId: 'C0GPUOPS' } as const;
  const view = formModal(
    { title: 'Create an instance' },
    metadata as never,
    [
      section('Pick a *type*.'),
      textInput('name', 'Name', { placeholder: 'e.g. train-01' }),
      selectInput(
        'type',
        'Instance type',
        [
          {
            label: 'Available now',
            choices: [
              { text: 'h100-hgx-80gb.1x · 16 free', value: 'h100-hgx-80gb.1x' },
              { text: 'l40s-48gb.2x', value: 'l40s-48gb.2x' },
            ],
          },
          { label: 'Seen before', choices: [{ text: 'cpu.16x', value: 'cpu.16x' }] },
        ],
        { initial: 'l40s-48gb.2x' },
      ),
      numberInput('count', 'Count', { min: 1, max: 8, initial: 2 }),
      checkboxesInput('options', 'Options', [
        { text: 'Preemptible', value: 'preemptible' },
        { text: 'Ephemeral', value: 'ephemeral' },
      ]),
      textInput('tags', 'Tags', { multiline: true, optional: true, hint: 'key=value, one a line.' }),
    ],
    'Create',
  ) as unknown as Record<string, unknown>;
  const fields = formFields(view, ctx);
  const field = (id: string): FormField => fields.find((f) => f.blockId === id)!;

  it('draws the form head and its non-input blocks, and asks for each input in order', () => {
    expect(renderView(view, ctx).lines).toEqual([
      '▣ Create an instance  (Create · Cancel)',
      '│ Pick a type.',
    ]);
    expect(fields.map((f) => [f.blockId, f.kind, f.optional])).toEqual([
      ['name', 'text', false],
      ['type', 'select', false],
      ['count', 'number', false],
      ['options', 'checkboxes', true],
      ['tags', 'text', true],
    ]);
    expect(field('type').options.map((o) => [o.value, o.group])).toEqual([
      ['h100-hgx-80gb.1x', 'Available now'],
      ['l40s-48gb.2x', 'Available now'],
      ['cpu.16x', 'Seen before'],
    ]);
  });

  it('lists the options by number and says what Enter keeps', () => {
    expect(fieldPrompt(field('type'))).toEqual({
      lines: [
        'Instance type (required)',
        '   Available now:',
        '    1) h100-hgx-80gb.1x · 16 free',
        '    2) l40s-48gb.2x (chosen)',
        '   Seen before:',
        '    3) cpu.16x',
      ],
      prompt: '  a number from the list, Enter keeps l40s-48gb.2x> ',
    });
    expect(fieldPrompt(field('name')).prompt).toBe('  e.g. train-01 — text> ');
    expect(fieldPrompt(field('tags')).lines[0]).toBe('Tags (optional) — key=value, one a line.');
  });

  it('turns answers into the state Slack submits', () => {
    expect(answerField(field('name'), 'train-2')).toEqual({
      ok: true,
      state: { type: 'plain_text_input', value: 'train-2' },
    });
    expect(answerField(field('type'), '3')).toEqual({
      ok: true,
      state: {
        type: 'static_select',
        selected_option: { text: { type: 'plain_text', text: 'cpu.16x', emoji: true }, value: 'cpu.16x' },
      },
    });
    expect(answerField(field('type'), 'h100-hgx-80gb.1x')).toMatchObject({
      ok: true,
      state: { selected_option: { value: 'h100-hgx-80gb.1x' } },
    });
    expect(answerField(field('type'), '')).toMatchObject({
      ok: true,
      state: { selected_option: { value: 'l40s-48gb.2x' } },
    });
    expect(answerField(field('count'), '')).toEqual({
      ok: true,
      state: { type: 'number_input', value: '2' },
    });
    expect(answerField(field('options'), '2, 1')).toMatchObject({
      ok: true,
      state: { type: 'checkboxes', selected_options: [{ value: 'ephemeral' }, { value: 'preemptible' }] },
    });
    expect(answerField(field('options'), '-')).toEqual({
      ok: true,
      state: { type: 'checkboxes', selected_options: [] },
    });
    expect(answerField(field('tags'), 'team=ml\\nowner=ada')).toEqual({
      ok: true,
      state: { type: 'plain_text_input', value: 'team=ml\nowner=ada' },
    });
    expect(answerField(field('tags'), '')).toEqual({
      ok: true,
      state: { type: 'plain_text_input', value: null },
    });
  });

  it('refuses what Slack itself would refuse, in a sentence', () => {
    expect(answerField(field('name'), '  ')).toEqual({ ok: false, error: 'Please fill this in.' });
    expect(answerField(field('type'), '9')).toEqual({
      ok: false,
      error: '"9" is not one of the options; type its number.',
    });
    expect(answerField(field('count'), 'two')).toEqual({ ok: false, error: '"two" is not a number.' });
    expect(answerField(field('options'), '1, 7')).toEqual({
      ok: false,
      error: '"7" is not one of the options.',
    });
  });
});

describe('emoji codes in what the bot says', () => {
  it('are each drawn as the character Slack shows, never as a raw :code:', () => {
    const root = new URL('../../src', import.meta.url).pathname;
    const used = new Set<string>();
    for (const entry of readdirSync(root, { recursive: true, withFileTypes: true })) {
      // The simulator speaks for the cloud, not the bot.
      if (!entry.isFile() || !entry.name.endsWith('.ts') || entry.parentPath.includes('/sim')) continue;
      const text = readFileSync(join(entry.parentPath, entry.name), 'utf8');
      for (const m of text.matchAll(/(?<=['`\s]):([a-z0-9_]+):(?=[\s*'`])/g)) used.add(m[1]!);
    }
    used.delete('name'); // the comment above EMOJI
    expect([...used].filter((code) => !(code in EMOJI))).toEqual([]);
  });
});
