import type { Shape } from '../cloud/shape.js';
import { RANGE_BOUNDS } from '../metrics/range-rule.js';
import { kindsMissingIn } from './availability.js';
import {
  commandPath,
  FORM_KINDS,
  GPU_COMMAND_KINDS,
  type GpuCommandKind,
  kindsOfClass,
  specsOfGroup,
} from './registry.js';
import { GROUPS, OPERATION_CLASSES } from './spec.js';

// docs/commands.md, written from the registry (`npm run docs:commands`; a test fails when the file in
// the repository differs). The prose that is not about one subcommand lives here with it.

const SHAPES: readonly Shape[] = ['A', 'B', 'C'];

const INTRO = `# The \`/gpu\` command

<!-- Generated from src/commands/ by \`npm run docs:commands\`: edit the specs, not this file. -->

One slash command, \`/gpu\`, with subcommands in its text. Every subcommand is one spec in its
family folder under \`src/commands/\` (its words, arguments, zod schema, help, delivery, policy class,
cloud operations, cost and form); the pure parser (\`src/commands/parse-command.ts\`) walks the words
of all specs and hands the rest of the line to the spec's reader. It does no I/O, so every error
below comes back at once, before anything is queued. \`<instance>\` and cluster arguments take a
name or an id within the channel's project.

\`/gpu\` alone, or \`/gpu help\`, shows the overview; \`/gpu help <subcommand>\` (for example
\`/gpu help k8s\` or \`/gpu help k8s pool\`) shows the syntax and an example of each subcommand under it.

## Grammar

Arguments in \`[brackets]\` are optional, \`...\` means "may repeat". Subcommand words are
case-insensitive (\`/gpu K8S Pools prod\` works); names keep their case.`;

const VALUE_RULES =
  '## Value rules\n\n| Value | Rule |\n|---|---|\n| Names (instances, clusters, pools, keys, filesystems, instance types, waitlist ids, projects) | 1 to 63 characters of letters, digits, `.`, `_`, `-`, starting with a letter or digit. An id (UUID) fits this rule too. |\n| Node counts (`pool add`) | a whole number from 1 to 1000, in plain digits |\n| Waitlist count | a whole number from 1 to 64 (default 1) |\n| `audit [n]` | a whole number from 1 to 500 (default 20) |\n| Ranges (`--range`) | a number with a unit `m`, `h`, `d` or `w` (`s` is accepted too), or a sum like `1h30m`; ' +
  RANGE_BOUNDS +
  '; default 1h. Parsed to seconds (`rangeSeconds`). |\n| Sizes (`fs create`) | a whole number with a unit `Gi`, `Ti`, `G`, `T`, `GB` or `TB`, e.g. `512Gi` |\n| Kubernetes versions | `v1.31` or `v1.31.2`; a missing `v` is added (`1.31` \u2192 `v1.31`) |\n| Tag keys (`--tag k=v`) | 1 to 63 characters, starting and ending with a letter or digit, `-` `_` `.` inside; values up to 255 characters (may be empty) |\n| Label keys (`k8s label`) | an optional DNS prefix and `/` (as in `service.io/metrics-enabled`), then a name like a tag key; values empty or up to 63 characters starting and ending with a letter or digit |\n| Usernames (`--username`, `rmuser`, `sudo`) | a lowercase letter or `_`, then lowercase letters, digits, `_` or `-`; 32 characters at most |\n| SSH public keys | see `/gpu keys add` above |\n| PromQL | 1 to 2,000 characters |';
const WORDS =
  '## Words, quotes and what Slack does to the text\n\n- Words are separated by any whitespace; leading and trailing space is ignored.\n- `"double"` and `\'single\'` quotes group words, and so do Slack\'s smart quotes `\u201c \u201d` and `\u2018 \u2019`. A\n  quote inside a word joins like in a shell: `--tag note="two words"`. There are no backslash\n  escapes. An unclosed quote is an error (except in an SSH key or a PromQL expression, which are\n  taken raw).\n- Flags take `--flag value` or `--flag=value`. A client that turned `--` into an em dash (`\u2014range`)\n  is understood. A quoted `"--x"` is a value, not a flag.\n- Slack wraps links and mentions: `<http://train.io|train.io>` becomes `train.io` (the text the\n  person typed), `<mailto:a@b.io|a@b.io>` becomes `a@b.io`, `<@U123|ada>` becomes `@U123`, and\n  `&lt; &gt; &amp;` become `< > &`.';
const ERRORS =
  '## Errors and suggestions\n\nEvery error says what was wrong and why, and comes with the usage line and a working example of the\nsubcommand being typed:\n\n```\n"0" is not a valid node count: a node count is a whole number from 1 to 1000.\nUsage: /gpu k8s pool add <cluster> [<name> <type> <count>]\nExample: /gpu k8s pool add prod gpu-a h100-hgx-80gb.8x 2\n```\n\nA mistyped subcommand gets the nearest known one by Damerau\u2013Levenshtein distance (one edit for\nwords of up to three letters, two for longer ones), at the first or second level, for flags and\nfor `on`/`off`: `/gpu strat` \u2192 "Did you mean `/gpu start`?", `/gpu k8s pols` \u2192 "Did you mean\n`/gpu k8s pools`?". Common synonyms are offered, never silently accepted (`delete` \u2192 `rm`,\n`list` \u2192 `ls`, `kubernetes` \u2192 `k8s`), and a second-level word typed alone points to its group\n(`/gpu kubeconfig prod` \u2192 "Did you mean `/gpu k8s kubeconfig`?").';
const SHAPE_INTRO =
  '## What each shape lacks\n\nA subcommand the configured shape (`CLOUD_API_SHAPE`) cannot serve answers in one sentence what the\ncloud cannot do, in words, and what to do instead, e.g. "`/gpu fs rm` does not work with this\ncloud: its API cannot delete filesystems. Use the cloud\'s own console or CLI for it; `/gpu help`\nlists what works here." The check uses the route table (`src/cloud/routes.ts`, with any\n`CLOUD_ROUTES` overrides), so a deployment that adds a route also enables the subcommand.\n`/gpu help` lists only what works, with one line naming what it left out and why; `/gpu help <topic>`\nstill shows those subcommands, marked. A command that creates something the cloud cannot list or\ndelete (`fs create` in shape B) says so when it is accepted.';
const SHAPE_NOTES =
  "Available everywhere: the platform API commands (`configs`, `keys`, `keys add`, `keys rm`), the\nmetrics commands, the bot's own (`help`, `project`, `jobs`, `approvals`, `watch`, `waitlist`,\n`waitlist rm`, `audit`), and `capacity` and `waitlist <type>`, which read the capacity listing in\nshape C and the platform API's price list in A and B (which types can be ordered, where and how\nsoon, but not how many machines are free).\n\nSome arguments need more than the command's own operation:\n\n- **Names need a listing.** A name is turned into an id by listing; an id needs no listing. So in\n  shapes A and B, which cannot list projects, `/gpu project use` takes a project id, not a name;\n  in shape B, which cannot list filesystems, `/gpu create --fs` takes filesystem ids.\n- **`/gpu create --fs` in shape A** is refused: instances there take no filesystems.\n- **`/gpu slurm show` in shape C** is answered from the cluster list (C has no \"get\", and its Slurm\n  clusters carry only an id and a name).\n- **`/gpu slurm sudo`** reads the user first (the update must resend the user's SSH keys), so it\n  needs both `getSlurmUser` and `updateSlurmUser`.\n- **`/gpu waitlist <type> <count>`** waits for that many free machines where the cloud lists\n  capacity (C); from the price list (A, B) it waits for the type to be offered in some region, as\n  that list cannot count machines.\n- **`/gpu slurm pools <c>` in shape C** lists every Slurm node pool of the project: C's listing is\n  not scoped by cluster and its pools do not name their cluster.";

const cell = (text: string): string => `\`${text.replaceAll('|', '\\|')}\``;

function grammar(): string[] {
  return GROUPS.flatMap((group) => {
    const specs = specsOfGroup(group.key);
    const rows = specs.map((s) => `| ${cell(s.usage)} | ${s.summary} | ${cell(s.example)} |`);
    const notes = specs.flatMap((s) => (s.notes ? [s.notes] : []));
    return [
      `### ${group.title}`,
      ['| Syntax | What it does | Example |', '|---|---|---|', ...rows].join('\n'),
      ...notes,
    ];
  });
}

/** What a shape cannot serve, by the words people type (`waitlist <type>` for the waitlist's add). */
function missingIn(shape: Shape): string {
  return kindsMissingIn(shape)
    .map((kind) => `\`${wordsOf(kind)}\``)
    .join(', ');
}

function typedCommand(): string {
  const forms = FORM_KINDS.map((k) => `\`${k}\``).join(', ');
  return `## The typed command

\`GpuCommand\` is a discriminated union on \`kind\`, derived from the specs: the words of the subcommand
joined with dots (\`ls\`, \`k8s.pool.add\`, \`slurm.sudo\`), except \`waitlist.add\` for
\`/gpu waitlist <type>\`. Kinds are stored in job data and the audit trail, so they never change.
There are ${GPU_COMMAND_KINDS.length} of them. Commands that can open a form carry \`modal: true\` when
given no arguments (${forms}; the pool forms with only the cluster, \`slurm.adduser\` with \`--form\`).
Defaults are filled in by the parser: \`rangeSeconds\` 3600, waitlist \`count\` 1, audit \`limit\` 20,
\`preemptible\`/\`ephemeral\`/\`sudo\` false, empty \`filesystems\` and \`tags\`. The parsed command
always passes \`gpuCommandSchema\`, so a job payload built from it re-validates unchanged.`;
}

/** The policy's operation classes and their kinds (docs/policy.md sets a minimum role per class). */
function classes(): string {
  const rows = OPERATION_CLASSES.map(
    (cls) =>
      `| \`${cls}\` | ${kindsOfClass(cls)
        .map((k) => `\`${k}\``)
        .join(', ')} |`,
  );
  return [
    '## Operation classes',
    'Every kind belongs to one class; the policy sets the least role per class and may override it per kind ([policy.md](policy.md)).',
    ['| Class | Kinds |', '|---|---|', ...rows].join('\n'),
  ].join('\n\n');
}

/** `fs rm`, `waitlist <type>`: the words people type for a kind. */
function wordsOf(kind: GpuCommandKind): string {
  const spec = specsOfGroup('observe').find((s) => s.kind === kind && s.words !== undefined);
  return spec ? spec.usage.replace(/^\/gpu /, '').replace(/\s*\[.*$/, '') : commandPath(kind);
}

/**
 * Which subcommands each shape supports, for the README: the ones some shape lacks, one row each;
 * every other subcommand works in all three.
 */
export function renderShapeTable(): string {
  const missing = new Map(SHAPES.map((shape) => [shape, new Set(kindsMissingIn(shape))]));
  const varying = GPU_COMMAND_KINDS.filter((kind) => SHAPES.some((shape) => missing.get(shape)!.has(kind)));
  const rows = varying.map(
    (kind) =>
      `| \`${wordsOf(kind)}\` | ${SHAPES.map((shape) => (missing.get(shape)!.has(kind) ? '—' : '✓')).join(' | ')} |`,
  );
  return [
    `| Subcommand | ${SHAPES.join(' | ')} |`,
    `|---|${SHAPES.map(() => ':-:').join('|')}|`,
    ...rows,
    '',
    `Every other subcommand (${GPU_COMMAND_KINDS.length - varying.length} of ${GPU_COMMAND_KINDS.length}) works in all three shapes. Generated from the command registry by \`npm run docs:commands\`.`,
  ].join('\n');
}

export const SHAPE_TABLE_START = '<!-- shape-table:start (npm run docs:commands) -->';
export const SHAPE_TABLE_END = '<!-- shape-table:end -->';

/** The README with its shape table replaced by the generated one. */
export function withShapeTable(readme: string): string {
  const start = readme.indexOf(SHAPE_TABLE_START);
  const end = readme.indexOf(SHAPE_TABLE_END);
  if (start < 0 || end < start) throw new Error('README.md has no shape table markers');
  return `${readme.slice(0, start + SHAPE_TABLE_START.length)}\n${renderShapeTable()}\n${readme.slice(end)}`;
}

export function renderCommandsDoc(): string {
  const shapeTable = [
    '| Shape | Subcommands not available |',
    '|---|---|',
    ...SHAPES.map((shape) => `| ${shape} | ${missingIn(shape)} |`),
  ].join('\n');
  return `${[INTRO, ...grammar(), VALUE_RULES, WORDS, ERRORS, SHAPE_INTRO, shapeTable, SHAPE_NOTES, classes(), typedCommand()].join('\n\n')}\n`;
}
