import { parser } from '@prometheus-io/lezer-promql';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ValidationError } from '../../src/errors.js';
import { scopePromql } from '../../src/metrics/scope-promql.js';

// /gpu metrics query limits a person's PromQL to the channel's project before it leaves gpuops: every
// vector selector gains project_id="<project>", and what cannot be limited is refused with one sentence.

const P = '3f1c2a9e-8b7d-4c1e-9f2a-1b2c3d4e5f60';
const scope = { label: 'project_id', value: P };
const M = `project_id="${P}"`;

/** The error sentence scopePromql refuses with. */
function refusal(expr: string, label = 'project_id'): string {
  try {
    scopePromql(expr, { label, value: P });
  } catch (err) {
    expect(err).toBeInstanceOf(ValidationError);
    return (err as Error).message;
  }
  throw new Error(`${expr} was not refused`);
}

/** Every vector selector of the expression, as text, read with the Prometheus grammar independently of the rewriter. */
function selectors(expr: string): string[] {
  const out: string[] = [];
  parser.parse(expr).iterate({
    enter(node) {
      expect(node.type.isError).toBe(false);
      if (node.name === 'VectorSelector') out.push(expr.slice(node.from, node.to));
    },
  });
  return out;
}

describe('scoping PromQL to a project', () => {
  it.each([
    ['DCGM_FI_DEV_GPU_UTIL', `DCGM_FI_DEV_GPU_UTIL{${M}}`],
    ['avg(DCGM_FI_DEV_GPU_UTIL)', `avg(DCGM_FI_DEV_GPU_UTIL{${M}})`],
    ['foo{}', `foo{${M}}`],
    ['foo{a="b",}', `foo{a="b", ${M},}`],
    [
      'sum by (instance_name) (rate(foo{a="b",c!~"d"}[5m] offset 1h))',
      `sum by (instance_name) (rate(foo{a="b",c!~"d", ${M}}[5m] offset 1h))`,
    ],
    ['{__name__=~"DCGM_.*"}', `{__name__=~"DCGM_.*", ${M}}`],
    ['{"gpu.util"}', `{"gpu.util", ${M}}`],
    ['foo[5m:1m] @ 100', `foo{${M}}[5m:1m] @ 100`],
    ['max_over_time(rate(foo[5m])[1h:5m])', `max_over_time(rate(foo{${M}}[5m])[1h:5m])`],
    ['foo offset -5m', `foo{${M}} offset -5m`],
    ['foo and on(a) bar', `foo{${M}} and on(a) bar{${M}}`],
    [
      'sum(foo) by (a) / on() group_left count(bar)',
      `sum(foo{${M}}) by (a) / on() group_left count(bar{${M}})`,
    ],
    [
      'histogram_quantile(0.9, sum by (le) (rate(x_bucket[5m])))',
      `histogram_quantile(0.9, sum by (le) (rate(x_bucket{${M}}[5m])))`,
    ],
    ['label_replace(up, "a", "$1", "b", "(.*)")', `label_replace(up{${M}}, "a", "$1", "b", "(.*)")`],
    ['topk(3, foo) > bool 50', `topk(3, foo{${M}}) > bool 50`],
    ['foo{a=`b"c`}', `foo{a=\`b"c\`, ${M}}`],
    ['foo # a comment with { and }', `foo{${M}} # a comment with { and }`],
    ['foo{a="b" # c\n}', `foo{a="b", ${M} # c\n}`],
    ['1 + 2', '1 + 2'],
    [`foo{project_id="${P}"}`, `foo{project_id="${P}"}`],
    [`foo{"project_id"="${P}"}`, `foo{"project_id"="${P}"}`],
  ])('%s', (expr, expected) => {
    const scoped = scopePromql(expr, scope);
    expect(scoped).toBe(expected);
    expect(selectors(scoped).every((s) => s.includes(M) || s.includes(`"project_id"="${P}"`))).toBe(true);
  });

  it('uses the configured label name and escapes the project id', () => {
    expect(scopePromql('foo', { label: 'tenant', value: 'a"b\\c' })).toBe('foo{tenant="a\\"b\\\\c"}');
  });

  it.each([
    'foo{project_id="another-project"}',
    'foo{project_id!="x"}',
    'foo{project_id=~".*"}',
    'foo{project_id=~".+"} or bar',
    `foo{project_id="${P}"} + bar{project_id!~"${P}"}`,
    'foo{"project_id"=~".*"}',
  ])('refuses a matcher on the project label that reaches further: %s', (expr) => {
    expect(refusal(expr)).toMatch(
      /^The query's matcher `.*project_id.*` reaches beyond this channel's project: .* so leave project_id out of the query\.$/,
    );
  });

  it('reads escapes in a quoted label name as Prometheus does', () => {
    expect(refusal('foo{"project_\\x69d"="x"}')).toContain("reaches beyond this channel's project");
  });

  it.each([
    [
      'sum((DCGM_FI_DEV_GPU_UTIL',
      /^gpuops could not read the PromQL expression: it stops before it is complete/,
    ],
    ['sum(foo} + 1', /^gpuops could not read the PromQL expression: near `sum\(foo} \+ 1` \(character 8\)/],
    ['foo{a="b"', /^gpuops could not read the PromQL expression/],
    ['   ', /^The PromQL expression is empty/],
    ['foo{a="\\q"}', /^gpuops could not read the string "\\q" in the query/],
    [
      `foo or ${'bar or '.repeat(700)}baz`,
      /^The PromQL expression is \d+ characters long: gpuops takes at most 4000/,
    ],
  ])('refuses what it cannot read with one sentence: %#', (expr, message) => {
    const text = refusal(expr);
    expect(text).toMatch(message);
    expect(text.split(/[.:] [A-Z]/).length).toBe(1);
  });

  const label = fc.constantFrom('a', 'gpu', 'instance_name', 'le', '__name__');
  const value = fc.string({ maxLength: 6 }).map((s) => JSON.stringify(s));
  const matcher = fc
    .tuple(label, fc.constantFrom('=', '!=', '=~', '!~'), value)
    .map(([l, op, v]) => `${l}${op}${v}`);
  const selector = fc
    .tuple(fc.constantFrom('foo', 'DCGM_FI_DEV_GPU_UTIL', ''), fc.array(matcher, { maxLength: 3 }))
    .map(([name, ms]) =>
      name === '' || ms.length > 0 ? `${name}{${ms.length ? ms.join(',') : 'a="x"'}}` : name,
    );
  const expr: fc.Arbitrary<string> = fc.letrec((tie) => ({
    e: fc.oneof(
      { depthSize: 'small', withCrossShrink: true },
      selector,
      fc.constant('42'),
      tie('e').map((e) => `sum by (a) (${e})`),
      tie('e').map((e) => `abs(${e})`),
      selector.map((s) => `rate(${s}[5m])`),
      tie('e').map((e) => `max_over_time((${e})[10m:1m])`),
      selector.map((s) => `${s} offset 5m`),
      fc
        .tuple(tie('e'), fc.constantFrom('+', '/', 'and', 'or', 'unless', '> bool'), tie('e'))
        .map(([l, op, r]) => `(${l}) ${op} (${r})`),
    ),
  })).e;

  it('puts the project on every selector of any expression, once, and changes nothing else (property)', () => {
    fc.assert(
      fc.property(expr, (e) => {
        const scoped = scopePromql(e, scope);
        const before = selectors(e);
        const after = selectors(scoped);
        expect(after).toHaveLength(before.length);
        for (const s of after) expect(s.split(M)).toHaveLength(2);
        expect(scoped.replaceAll(`, ${M}`, '').replaceAll(`{${M}}`, '')).toBe(e);
        expect(scopePromql(scoped, scope)).toBe(scoped);
      }),
      { numRuns: 300 },
    );
  });

  it('either refuses or scopes every selector, whatever the text (property)', () => {
    const pieces = fc.constantFrom(
      'foo',
      '{',
      '}',
      '(',
      ')',
      '[5m]',
      ',',
      'a="b"',
      'project_id',
      '=~',
      '"',
      '`',
      '#',
      '\n',
      ' or ',
      'sum',
      ':1m]',
      '@',
      ' offset 1m',
      '\\',
    );
    fc.assert(
      fc.property(
        fc.array(pieces, { maxLength: 14 }).map((p) => p.join('')),
        (text) => {
          let scoped: string;
          try {
            scoped = scopePromql(text, scope);
          } catch (err) {
            expect(err).toBeInstanceOf(ValidationError);
            return;
          }
          for (const s of selectors(scoped)) expect(s).toContain(M);
        },
      ),
      { numRuns: 500 },
    );
  });
});
