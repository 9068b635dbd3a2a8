import { helpText } from '../help.js';
import { type Answers, sections } from '../kit/direct.js';

export const answers = {
  help: async (command, ctx) => {
    const texts = helpText(command.topic, { shape: ctx.shape, routes: ctx.routes });
    return { text: texts[0] ?? 'gpuops help', blocks: sections(texts.slice(0, 50)) };
  },
} satisfies Answers;
