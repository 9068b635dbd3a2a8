import { z } from 'zod';
import { type ArgReader, shown } from '../arg-reader.js';
import { name, noArgs, simple } from '../schema-kit.js';
import { defineCommand } from '../spec.js';
import { SPEND_PERIODS, type SpendPeriod } from './spend-period.js';

// `/gpu spend` and `/gpu budget`: what the spend ledger counted, and each budget's month (docs/budgets.md).

const PERSON = /^@[UW][A-Z0-9]{2,}$/;
const PERIOD_WORDS = new Set(['this', 'last', 'next', 'previous', 'current']);
const PERIOD_HINT = 'use `this month` (the default), `last month` or `this week`';

/** The period at the end of the words, if they end with one; a wrong one fails with the three there are. */
function readPeriod(r: ArgReader, words: string[]): SpendPeriod {
  const tail = words.slice(-2).join(' ').toLowerCase();
  const known = SPEND_PERIODS.find((p) => p === tail);
  if (known) {
    words.splice(-2);
    return known;
  }
  const last = words.at(-1)?.toLowerCase();
  const before = words.at(-2)?.toLowerCase();
  if (
    last !== undefined &&
    (/^(day|week|month|year|quarter)s?$/.test(last) ||
      PERIOD_WORDS.has(last) ||
      (before && PERIOD_WORDS.has(before)))
  ) {
    const typed = before && PERIOD_WORDS.has(before) ? `${before} ${last}` : last;
    r.fail(`${shown(typed)} is not a period \`/gpu spend\` knows: ${PERIOD_HINT}`);
  }
  return 'this month';
}

const spend = defineCommand({
  kind: 'spend',
  group: 'observe',
  usage: '/gpu spend [<project>|@person|<type>] [this month|last month|this week]',
  summary: 'spend counted by gpuops: the total, the top spenders and a chart of the days',
  example: '/gpu spend @U0ADA last month',
  schema: z.object({
    kind: z.literal('spend'),
    /** `@U123` for a person's machines, else a project id or an instance type. */
    filter: z.union([z.string().regex(PERSON), name]).optional(),
    period: z.enum(SPEND_PERIODS),
  }),
  parse(r: ArgReader) {
    const words = [...r.args().positionals];
    const period = readPeriod(r, words);
    if (words.length > 1) {
      r.fail(
        `${shown(words.join(' '))} is more than \`/gpu spend\` takes: name one project, @person or instance type, then the period`,
      );
    }
    const word = words[0];
    if (word === undefined) return { kind: 'spend', period };
    if (word.startsWith('@')) {
      if (!PERSON.test(word)) {
        r.fail(
          `${shown(word)} is not a Slack mention gpuops can read: pick the person from Slack's @ list so their id comes through`,
        );
      }
      return { kind: 'spend', filter: word, period };
    }
    return { kind: 'spend', filter: r.name(word, 'a project, @person or instance type'), period };
  },
  // The period is bracketed in the usage, so it is named here: "last month" must not read as this one.
  describe: (c) =>
    ['/gpu spend', c.filter, c.period === 'this month' ? undefined : c.period].filter(Boolean).join(' '),
  delivery: 'channel',
  operationClass: 'read',
  needs: [],
  notes:
    '`/gpu spend` reads the spend ledger gpuops keeps for every project it acts on (docs/budgets.md): the total of the period, the top spenders by owner, project and instance type, and a PNG chart of the dollars of each day in the thread. A word before the period is a project id or an instance type, whichever the ledger knows; `@person` counts the machines they had made through gpuops.',
});

const budget = defineCommand({
  kind: 'budget',
  group: 'observe',
  usage: '/gpu budget',
  summary: "each budget's spend this month, its forecast to the month's end and its state",
  example: '/gpu budget',
  schema: simple('budget'),
  parse: noArgs('budget'),
  delivery: 'ephemeral',
  operationClass: 'read',
  needs: [],
});

export const specs = [spend, budget] as const;

/** Words people reach for that this family spells differently: offered, never silently accepted. */
export const synonyms: Readonly<Record<string, string>> = {
  budgets: 'budget',
  cost: 'spend',
  costs: 'spend',
  spending: 'spend',
};
