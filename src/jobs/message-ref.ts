import { z } from 'zod';

/** A Slack message gpuops posted and edits in place: a request's message, an approval card. */
export const messageRefSchema = z.object({ channel: z.string().min(1), ts: z.string().min(1) });
export type MessageRef = z.infer<typeof messageRefSchema>;
