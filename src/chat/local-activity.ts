import type {
  EphemeralMessage,
  MessageVersion,
  StoredFile,
  StoredMessage,
  StoredView,
} from '../devkit/fake-slack-api.js';

// What the terminal keeps of the fake Slack's records (local-slack-api.ts): each channel message with
// the number it is shown with, the files saved to disk, and the log of everything people saw, which the
// chat reads to know how a command ended.

export interface SavedFile {
  readonly id: string;
  readonly filename: string;
  readonly title: string;
  readonly path: string | undefined;
  readonly length: number;
}

/** A channel message as the terminal shows it: the fake's message with the number it is shown with. */
export interface LocalMessage {
  readonly channel: string;
  readonly ts: string;
  /** The number it is shown with: #n. */
  readonly number: number;
  readonly threadTs: string | undefined;
  readonly text: string | undefined;
  readonly blocks: readonly unknown[] | undefined;
  readonly files: readonly SavedFile[];
  readonly history: readonly MessageVersion[];
  readonly deleted: boolean;
}

/** Everything people saw, in order: what the chat reads to know how a command ended. */
export type Activity =
  | { readonly seq: number; readonly kind: 'message'; readonly edit: boolean; readonly message: LocalMessage }
  | { readonly seq: number; readonly kind: 'ephemeral'; readonly ephemeral: EphemeralMessage }
  | { readonly seq: number; readonly kind: 'view'; readonly view: StoredView }
  | { readonly seq: number; readonly kind: 'deleted'; readonly message: LocalMessage };

export const savedFile = (f: StoredFile): SavedFile => ({
  id: f.id,
  filename: f.filename,
  title: f.title ?? f.filename,
  path: f.path,
  length: f.length,
});

/** A live view of a fake message with its number: edits show through. */
export function localMessage(m: StoredMessage, number: number): LocalMessage {
  return {
    channel: m.channel,
    ts: m.ts,
    number,
    threadTs: m.threadTs,
    get text() {
      return m.text;
    },
    get blocks() {
      return m.blocks;
    },
    get files() {
      return m.files.map(savedFile);
    },
    history: m.history,
    get deleted() {
      return m.deleted;
    },
  };
}
