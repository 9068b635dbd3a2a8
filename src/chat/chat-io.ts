import { clearLine, createInterface, cursorTo, type Interface } from 'node:readline';
import type { Readable, Writable } from 'node:stream';

// Where the terminal chat reads lines and prints what people see. A person at a terminal gets a prompt
// that stays put while answers arrive above it; a script (a file, or standard input that is not a
// terminal) is read line by line and echoed after its prompt, so the output reads as a transcript.

export interface ChatIo {
  /** True for a person at a terminal: no waiting between lines, forms re-ask a field after a mistake. */
  readonly interactive: boolean;
  /** The next line, or undefined at the end of input. Shows `prompt` first. */
  next(prompt: string): Promise<string | undefined>;
  print(lines: readonly string[]): void;
  /** Called once when the person presses Ctrl-C (terminals only). */
  onInterrupt(handler: () => void): void;
  close(): void;
}

/** A prompt at a terminal (readline), answers printed above it as they come. */
export function terminalIo(input: Readable, output: Writable & { isTTY?: boolean }): ChatIo {
  const rl: Interface = createInterface({ input, output, terminal: true, historySize: 200 });
  let waiting: ((line: string | undefined) => void) | undefined;
  let closed = false;
  let prompting = false;
  const queued: string[] = [];
  rl.on('line', (line) => {
    prompting = false;
    if (waiting) {
      const resolve = waiting;
      waiting = undefined;
      resolve(line);
    } else {
      queued.push(line);
    }
  });
  rl.on('close', () => {
    closed = true;
    waiting?.(undefined);
    waiting = undefined;
  });
  let interrupt: (() => void) | undefined;
  rl.on('SIGINT', () => {
    if (interrupt) interrupt();
    else rl.close();
  });
  return {
    interactive: true,
    next(prompt) {
      const line = queued.shift();
      if (line !== undefined) return Promise.resolve(line);
      if (closed) return Promise.resolve(undefined);
      rl.setPrompt(prompt);
      prompting = true;
      rl.prompt();
      return new Promise((resolve) => {
        waiting = resolve;
      });
    },
    print(lines) {
      if (closed) {
        output.write(`${lines.join('\n')}\n`);
        return;
      }
      // Lift the prompt, print above it, and put it back with what was typed so far.
      if (prompting) {
        clearLine(output, 0);
        cursorTo(output, 0);
      }
      output.write(`${lines.join('\n')}\n`);
      if (prompting) rl.prompt(true);
    },
    onInterrupt(handler) {
      interrupt = handler;
    },
    close() {
      if (!closed) rl.close();
    },
  };
}

/** Lines of a script (a file's stream or piped standard input), each echoed after its prompt. */
export function scriptIo(input: Readable, output: Writable): ChatIo {
  const rl = createInterface({ input, terminal: false, crlfDelay: Number.POSITIVE_INFINITY });
  const lines = rl[Symbol.asyncIterator]();
  let done = false;
  return {
    interactive: false,
    async next(prompt) {
      if (done) return undefined;
      const step = await lines.next();
      if (step.done) {
        done = true;
        return undefined;
      }
      output.write(`${prompt}${step.value}\n`);
      return step.value;
    },
    print(lines) {
      output.write(`${lines.join('\n')}\n`);
    },
    onInterrupt() {},
    close() {
      done = true;
      rl.close();
    },
  };
}
