import { z } from 'zod';
import { type ArgReader, shown } from '../arg-reader.js';
import { defineDirectCommand } from '../spec.js';
import { nearestWord } from '../suggest.js';

export const help = defineDirectCommand({
  kind: 'help',
  group: 'basics',
  usage: '/gpu help [topic]',
  summary: 'this overview, or the syntax of one subcommand',
  example: '/gpu help k8s',
  // The parser accepts only known topics; help for any other text is the overview.
  schema: z.object({ kind: z.literal('help'), topic: z.string().max(200).optional() }),
  parse(r: ArgReader) {
    const words = r.cursor
      .all()
      .map((w) => w.value.toLowerCase())
      .filter((w) => w !== '/gpu');
    if (words.length === 0) return { kind: 'help' };
    for (let n = words.length; n > 0; n--) {
      const topic = words.slice(0, n).join(' ');
      if (r.grammar.topics.includes(topic)) return { kind: 'help', topic };
    }
    const near = nearestWord(words[0]!, r.grammar.topWords, r.grammar.synonyms);
    r.fail(
      `There is no help topic ${shown(words.join(' '))}; a topic is a subcommand, such as /gpu help k8s`,
      near ? `Did you mean \`/gpu help ${near}\`?` : undefined,
    );
  },
  delivery: 'direct',
  operationClass: 'read',
  needs: [],
});

export const specs = [help] as const;
