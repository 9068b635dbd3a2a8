import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createInfraClient } from '../../src/cloud/index.js';
import { staticToken } from '../../src/cloud/token-provider.js';
import { until } from '../support/gpuops-process.js';
import { filledValues, interactionBody, postSigned, viewSubmissionPayload } from '../support/slack-driver.js';
import type { Bot, Rig } from './support/reliability-rig.js';
import {
  finalOf,
  leaks,
  messageOf,
  redisText,
  SIGNING_SECRET,
  slash,
  startRig,
  TYPE,
} from './support/reliability-rig.js';

// After a full run (commands, a form with user data, a kubeconfig, cloud faults and failures, OAuth
// tokens fetched and used), no secret appears in the logs (debug level), in anything kept in Redis
// (every key scanned: job data, job records, audit, caches) or in anything sent to Slack (every Web
// API call, response_url answer and view). The kubeconfig reaches the requester as a DM file only.

const CHANNEL = 'C0SECRET';

describe('secrets after a full run', () => {
  let rig: Rig;
  let bot: Bot;
  const sealKey = randomBytes(32).toString('hex');
  const userData = `#cloud-config\nwrite_files:\n- path: /etc/app.env\n  content: API_PASSWORD=ud-${randomBytes(8).toString('hex')}\n`;
  let kubeconfig = '';

  beforeAll(async () => {
    rig = await startRig({ sim: { transitionMs: 100 } });
    bot = await rig.start('all', {
      logLevel: 'debug',
      env: {
        // OAuth client credentials instead of a static token: a client secret and access tokens in play.
        CLOUD_API_TOKEN: '',
        CLOUD_CLIENT_ID: rig.sim.info.clientId,
        CLOUD_CLIENT_SECRET: rig.sim.info.clientSecret,
        CLOUD_AUTH_URL: rig.sim.info.authUrl,
        CLOUD_AUDIENCE: rig.sim.info.cloudAudience,
        GPUOPS_SEAL_KEY: sealKey,
        LOG_LEVEL: 'debug',
      },
    });
    await rig.catalogue();
    // A Kubernetes cluster made outside gpuops, whose kubeconfig someone asks for.
    const cloud = createInfraClient({
      baseUrl: rig.sim.info.cloudUrl,
      shape: 'B',
      tokens: staticToken(rig.sim.info.cloudToken),
      projectId: rig.sim.info.projectId,
    });
    const cluster = await cloud.createK8sCluster({ name: 'prod', version: 'v1.31' });
    kubeconfig = await cloud.getKubeconfig({ clusterId: cluster.id });
    await cloud.close();
  });

  afterAll(async () => {
    await rig?.close();
  });

  async function channelCommand(text: string, userId: string) {
    const sent = await slash(rig, bot.url, text, { channelId: CHANNEL, userId });
    expect(sent.response.status).toBe(200);
    return finalOf(rig, CHANNEL, await messageOf(rig, sent), 30_000);
  }

  /** The private answer: the job's, on the response_url, or the listener's own when it answers at once. */
  async function privateCommand(text: string, userId: string): Promise<string> {
    const sent = await slash(rig, bot.url, text, { channelId: CHANNEL, userId });
    expect(sent.response.status).toBe(200);
    const ack = String((sent.response.json() as { text?: string }).text ?? '');
    if (!/Looking that up|direct message/.test(ack)) return ack;
    return String(
      (await rig.responses.waitForPost((p) => sent.responseUrl.endsWith(p.id), 30_000)).body.text,
    );
  }

  it('finds no token, key, client secret, kubeconfig or user data in logs, Redis or Slack', async () => {
    // A create from the form, with user data (sealed in Redis, never in job data).
    const triggerId = rig.slack.issueTriggerId();
    const since = rig.slack.mark();
    await slash(rig, bot.url, 'create', { channelId: CHANNEL, triggerId, userId: 'U0SEC1' });
    const opened = await rig.slack.waitFor(
      'views.open',
      (c) => c.body.trigger_id === triggerId,
      5_000,
      since,
    );
    const view = rig.slack.views.get((opened.response as { view: { id: string } }).view.id)!;
    const blocks = view.view.blocks as Array<{
      block_id?: string;
      element?: { type: string; action_id: string };
    }>;
    const submitted = rig.slack.mark();
    const response = await postSigned(
      bot.url,
      interactionBody(
        viewSubmissionPayload({
          callbackId: String(view.view.callback_id),
          values: filledValues(blocks, { name: 'sec-1', type: TYPE, user_data: userData }),
          privateMetadata: String(view.view.private_metadata),
          viewId: view.id,
          blocks,
          userId: 'U0SEC1',
        }),
      ),
      { secret: SIGNING_SECRET },
    );
    expect(response.text).toBe('');
    const posted = await rig.slack.waitFor(
      'chat.postMessage',
      (c) => c.body.channel === CHANNEL,
      10_000,
      submitted,
    );
    const created = await finalOf(rig, CHANNEL, String((posted.response as { ts: string }).ts), 30_000);
    expect(created.text).toMatch(/^Done: .*sec-1 is running/);

    // Everyday commands, some through cloud faults, one that fails.
    rig.sim.control.addFault({ operation: 'listInstances', status: 503, count: 2 });
    expect(await privateCommand('ls', 'U0SEC2')).toMatch(/Instances \(1\)/);
    expect((await channelCommand('stop sec-1', 'U0SEC3')).text).toMatch(/^Done: .*sec-1 is stopped/);
    rig.sim.control.addFault({ operation: 'startInstance', status: 500, count: 1 });
    expect((await channelCommand('start sec-1', 'U0SEC4')).text).toMatch(/^Done: .*sec-1 is running/);
    expect(await privateCommand('show nope', 'U0SEC5')).toMatch(/No instance "nope"/);
    await channelCommand(
      'keys add laptop ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIFuyvIwN8SVrspCLSMqeCCUbe1WBH+UgcwkB1g3duGfL ada@laptop',
      'U0SEC6',
    );
    // The kubeconfig, to the requester alone.
    rig.slack.setUser({ id: 'U0SEC7', name: 'ada' });
    const answer = await privateCommand('k8s kubeconfig prod', 'U0SEC7');
    expect(answer).toMatch(/Sent you the kubeconfig of prod in a direct message/);
    await until(async () => (await rig.pendingRequests()) === 0, 'the queue to empty');

    // What the run left behind: the logs, every Redis key, everything sent to Slack.
    const more: Record<string, string> = {
      'seal key': sealKey,
      'user data': userData.split('content: ')[1]!.trim(),
      'user data (base64)': Buffer.from(userData.trimEnd()).toString('base64'),
      'kubeconfig token': /token: (\S+)/.exec(kubeconfig)![1]!,
      'kubeconfig CA': /certificate-authority-data: (\S+)/.exec(kubeconfig)![1]!,
    };
    expect(await leaks(rig, bot.logLines, more)).toEqual([]);
    const stored = await redisText(rig.redis);

    // The checks saw the real thing: debug logs, and job data holding only the sealed reference.
    expect(bot.logLines.some((l) => l.includes('"level":"debug"'))).toBe(true);
    expect(stored.keys).toBeGreaterThan(10);
    expect(stored.text).toContain('sec-1');
    expect(stored.text).toContain('sealedRef');
    // The kubeconfig went as a file to the requester's DM, and nowhere else.
    const files = [...rig.slack.files.values()];
    expect(files).toHaveLength(1);
    expect(files[0]!.channel).toBe(rig.slack.dmChannelFor('U0SEC7'));
    expect(files[0]!.bytes?.toString('utf8')).toBe(kubeconfig);
    console.info(
      `[reliability] secrets: ${bot.logLines.length} log lines, ${stored.keys} Redis keys, ` +
        `${rig.slack.calls.length} Slack calls and ${rig.responses.posts.length} response_url answers scanned for ` +
        `${6 + Object.keys(more).length} secrets and access tokens: none found`,
    );
  });
});
