import { z } from 'zod';
import { type ArgReader, shown, stripOuterQuotes } from '../arg-reader.js';
import { name, range, ruled } from '../schema-kit.js';
import { straightenQuotes } from '../slack-text.js';
import { defineCommand } from '../spec.js';
import { nearestWord } from '../suggest.js';
import { checkPromql, PROMQL_RULE } from '../value-rules.js';

const metrics = defineCommand({
  kind: 'metrics',
  group: 'observe',
  usage: '/gpu metrics <instance> [--range 1h]',
  summary: 'chart of GPU use of an instance over a range (default 1h)',
  example: '/gpu metrics train-01 --range 6h',
  schema: z.object({ kind: z.literal('metrics'), instance: name, rangeSeconds: range }),
  effects: (c) => ({ target: { instance: c.instance } }),
  // `/gpu metrics <instance>` sits beside `/gpu metrics query`: any other word is the instance.
  freeWords: true,
  parse(r: ArgReader) {
    const first = r.next();
    if (first === null) {
      r.fail('`/gpu metrics` needs an instance name or id, or query and a PromQL expression');
    }
    const instance = r.name(first.value, 'the instance name or id');
    const a = r.args({ range: 'value' });
    if (a.positionals.length > 0 && nearestWord(first.value, ['query']) !== null) {
      r.focus('metrics query');
      r.fail(
        `${shown(a.positionals.join(' '))} is more than \`/gpu metrics\` takes`,
        'Did you mean `/gpu metrics query`?',
      );
    }
    r.noMore(a, 0, 1);
    return { kind: 'metrics', instance, rangeSeconds: r.range(a.values.range) };
  },
  delivery: 'channel',
  operationClass: 'read',
  needs: ['listInstances'],
});

const query = defineCommand({
  kind: 'metrics.query',
  group: 'observe',
  usage: '/gpu metrics query <promql> [--range 1h]',
  summary: 'chart of any PromQL expression (the rest of the line)',
  example: '/gpu metrics query avg(DCGM_FI_DEV_GPU_UTIL) --range 1d',
  schema: z.object({
    kind: z.literal('metrics.query'),
    promql: ruled(checkPromql, PROMQL_RULE),
    rangeSeconds: range,
  }),
  parse(r: ArgReader) {
    let text = r.rest();
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
    if (promql === '') r.fail(`${r.label()} needs a PromQL expression`);
    const rule = checkPromql(promql);
    if (rule !== null) r.fail(`That expression is too long: write ${rule}`);
    return {
      kind: 'metrics.query',
      promql,
      rangeSeconds: r.range(rangeText === undefined ? undefined : [rangeText]),
    };
  },
  delivery: 'channel',
  operationClass: 'read',
  needs: [],
  // The expression is free text (quotes, backticks, many words): messages name the command alone.
  describe: () => '/gpu metrics query',
  notes:
    'The PromQL expression of `/gpu metrics query` is the raw rest of the line: quotes, braces and comparison operators reach Prometheus as typed (Slack\'s `&gt;`/`&lt;`/`&amp;` are decoded and smart quotes become straight ones). `--range` may come before or after it. Because `query` is a keyword here, an instance literally named `query` cannot be charted by name; use its id. Every selector of the expression is limited to the channel\'s project (`project_id="<project>"`, label set by `METRICS_PROJECT_LABEL`) before it is sent; an expression gpuops cannot read, or one with its own matcher on that label for another project, is refused (docs/metrics.md).',
});

export const specs = [metrics, query] as const;

/** Words people reach for that this family spells differently: offered, never silently accepted. */
export const synonyms: Readonly<Record<string, string>> = {
  metric: 'metrics',
  graph: 'metrics',
  chart: 'metrics',
};
