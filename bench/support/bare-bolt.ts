import { benchBoltApp, listenUntilTerm } from './bench-bolt-app.js';

// The baseline of the acknowledgement benchmark: a bare Bolt app on an HTTPReceiver whose /gpu handler
// only acknowledges. Same signature check, same body parsing, no work. Run as a child process:
// `node --import tsx bench/support/bare-bolt.ts` with SIGNING_SECRET and SLACK_API_URL set; it prints
// {"msg":"ready","port":N} once listening.

const { app, receiver } = benchBoltApp();
app.command('/gpu', async ({ ack }) => {
  await ack();
});

await listenUntilTerm(receiver);
