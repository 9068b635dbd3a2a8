// The Slack side of the image smoke test (scripts/image/smoke.sh), run with the image's own Node:
//   node drive.mjs slack     Slack's Web API (the project's fake, from the image's dist/) and a
//                            response_url endpoint, on 0.0.0.0:SMOKE_SLACK_PORT, until SIGTERM;
//   node drive.mjs command   posts a signed `/gpu SMOKE_TEXT` to SMOKE_WEB_URL as Slack does and
//                            waits for the answer the worker posts to the response_url;
//   node drive.mjs probe URL…  each URL answers 200.
// Plain lines on stdout; exit 1 on any failure; every wait has a deadline.
import { createHmac, randomBytes } from 'node:crypto';
import { createServer, request } from 'node:http';

const env = process.env;
const say = (line) => process.stdout.write(`${line}\n`);
const fail = (line) => {
  say(`FAIL: ${line}`);
  process.exit(1);
};

async function serveSlack() {
  const { FakeSlackApi } = await import('/app/dist/devkit/fake-slack-api.js');
  const team = env.SMOKE_TEAM_ID ?? 'T0FAKE';
  const fake = await FakeSlackApi.start({
    tokens: [env.SMOKE_BOT_TOKEN ?? ''],
    teamId: team,
    users: [{ id: 'U0ADA', name: 'ada', team_id: team }],
  });
  const fakePort = new URL(fake.url).port;
  const posts = [];
  // /response/* is the response_url the bot answers on; /_smoke/posts lists what it got; the rest
  // (Slack's Web API) is passed to the fake, which only listens on loopback.
  const server = createServer((req, res) => {
    if (req.method === 'GET' && req.url === '/_smoke/posts') {
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(posts));
      return;
    }
    if (req.method === 'POST' && req.url?.startsWith('/smoke-response/')) {
      let body = '';
      req.on('data', (d) => {
        body += d;
      });
      req.on('end', () => {
        posts.push({ id: req.url.slice('/smoke-response/'.length), body });
        res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
      });
      return;
    }
    const upstream = request(
      { host: '127.0.0.1', port: fakePort, method: req.method, path: req.url, headers: req.headers },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    upstream.on('error', () => res.writeHead(502).end());
    req.pipe(upstream);
  });
  const port = Number(env.SMOKE_SLACK_PORT ?? 4100);
  await new Promise((resolve) => server.listen(port, '0.0.0.0', resolve));
  say(`slack side listening on ${port}`);
  const stop = () => {
    server.close();
    fake.close().finally(() => process.exit(0));
    setTimeout(() => process.exit(0), 2_000).unref();
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}

async function fetchWithin(url, init = {}, ms = 5_000) {
  return fetch(url, { ...init, signal: AbortSignal.timeout(ms) });
}

async function command() {
  const web = env.SMOKE_WEB_URL ?? fail('SMOKE_WEB_URL is not set');
  const slack = env.SMOKE_SLACK_URL ?? fail('SMOKE_SLACK_URL is not set');
  const secret = env.SMOKE_SIGNING_SECRET ?? fail('SMOKE_SIGNING_SECRET is not set');
  const text = env.SMOKE_TEXT ?? 'configs';
  const timeoutMs = Number(env.SMOKE_TIMEOUT_MS ?? 30_000);
  const id = randomBytes(6).toString('hex');
  const body = new URLSearchParams({
    token: 'legacy-verification-token',
    team_id: env.SMOKE_TEAM_ID ?? 'T0FAKE',
    team_domain: 'fake-team',
    channel_id: 'C0GPU',
    channel_name: 'gpu-ops',
    user_id: 'U0ADA',
    user_name: 'ada',
    command: '/gpu',
    text,
    api_app_id: 'A0FAKE',
    is_enterprise_install: 'false',
    response_url: `${slack}/smoke-response/${id}`,
    trigger_id: `${Date.now()}.1.${randomBytes(16).toString('hex')}`,
  }).toString();
  const ts = Math.floor(Date.now() / 1000);
  const signature = `v0=${createHmac('sha256', secret).update(`v0:${ts}:${body}`).digest('hex')}`;
  const started = Date.now();
  let ack;
  // The web container may still be connecting to Redis: retry the POST for a few seconds.
  for (let attempt = 0; ; attempt++) {
    try {
      ack = await fetchWithin(`${web}/slack/events`, {
        method: 'POST',
        headers: {
          'content-type': 'application/x-www-form-urlencoded',
          'x-slack-request-timestamp': String(ts),
          'x-slack-signature': signature,
        },
        body,
      });
      break;
    } catch (err) {
      if (attempt >= 10) fail(`POST ${web}/slack/events: ${err.message}`);
      await new Promise((r) => setTimeout(r, 1_000));
    }
  }
  const ackText = await ack.text();
  if (ack.status !== 200) fail(`/gpu ${text}: HTTP ${ack.status} ${ackText.slice(0, 200)}`);
  say(`ok   /gpu ${text} acknowledged in ${Date.now() - started} ms: ${ackText.slice(0, 100)}`);
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const posts = await (await fetchWithin(`${slack}/_smoke/posts`)).json();
    const post = posts.find((p) => p.id === id);
    if (post) {
      const answer = JSON.parse(post.body);
      const shown = `${answer.text ?? ''} ${JSON.stringify(answer.blocks ?? [])}`;
      if (/something went wrong|failed|error/i.test(String(answer.text ?? '')))
        fail(`/gpu ${text}: the answer is an error: ${String(answer.text).slice(0, 200)}`);
      say(
        `ok   /gpu ${text} answered through the queue in ${Date.now() - started} ms (${answer.response_type ?? 'in place'}, ${shown.length} characters)`,
      );
      return;
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  fail(`/gpu ${text}: no answer on the response_url within ${timeoutMs} ms`);
}

async function probe(urls) {
  for (const url of urls) {
    let last = '';
    const deadline = Date.now() + Number(env.SMOKE_TIMEOUT_MS ?? 30_000);
    for (;;) {
      try {
        const res = await fetchWithin(url);
        const text = await res.text();
        if (res.status === 200) {
          say(`ok   ${url} 200 ${text.replace(/\s+/g, ' ').slice(0, 80)}`);
          break;
        }
        last = `HTTP ${res.status} ${text.slice(0, 200)}`;
      } catch (err) {
        last = err.message;
      }
      if (Date.now() > deadline) fail(`${url}: ${last}`);
      await new Promise((r) => setTimeout(r, 500));
    }
  }
}

const [mode, ...rest] = process.argv.slice(2);
if (mode === 'slack') await serveSlack();
else if (mode === 'command') await command();
else if (mode === 'probe') await probe(rest);
else fail(`unknown mode ${mode}: slack, command or probe`);
