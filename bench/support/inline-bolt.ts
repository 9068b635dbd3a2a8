import { setTimeout as sleep } from 'node:timers/promises';
import { benchBoltApp, benchCloud, listenUntilTerm } from './bench-bolt-app.js';

// The baseline of the end-to-end benchmark: what a bot without a queue would do. The /gpu handler
// acknowledges, posts one message, then calls the same simulator with the same cloud client from the
// listener itself (resolve the name, start or stop, read until the state settles) and edits the
// message to its final line. No Redis, no worker, no retries beyond the cloud client's own.
// Run as a child process: `node --import tsx bench/support/inline-bolt.ts` with SIGNING_SECRET,
// SLACK_API_URL, SLACK_BOT_TOKEN, CLOUD_API_URL, CLOUD_API_TOKEN, CLOUD_PROJECT_ID set.

const { cloud, projectId } = benchCloud();
const { app, receiver } = benchBoltApp();
app.command('/gpu', async ({ command, ack, client }) => {
  await ack();
  const [verb, name] = command.text.trim().split(/\s+/);
  const channel = command.channel_id;
  const posted = await client.chat.postMessage({ channel, text: `Working: /gpu ${verb} ${name}` });
  const ts = posted.ts!;
  try {
    if (verb !== 'start' && verb !== 'stop') throw new Error(`unknown verb ${verb}`);
    const instance = (await cloud.listInstances({ projectId })).find((i) => i.name === name);
    if (!instance) throw new Error(`no instance ${name}`);
    if (verb === 'start') await cloud.startInstance({ id: instance.id }, { projectId });
    else await cloud.stopInstance({ id: instance.id }, { projectId });
    const target = verb === 'start' ? 'running' : 'stopped';
    let delay = 50;
    let state = instance.state;
    for (;;) {
      state = (await cloud.getInstance({ id: instance.id }, { projectId })).state;
      if (state === target) break;
      await sleep(delay);
      delay = Math.min(delay * 2, 1_000);
    }
    await client.chat.update({ channel, ts, text: `Done: ${name} is ${state}.` });
  } catch (err) {
    await client.chat.update({ channel, ts, text: `Failed: ${(err as Error).message}` });
  }
});

await listenUntilTerm(receiver, () => cloud.close());
