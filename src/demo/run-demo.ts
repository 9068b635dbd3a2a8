import { randomBytes } from 'node:crypto';
import { createReadStream, createWriteStream, type WriteStream } from 'node:fs';
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Readable, Writable } from 'node:stream';
import { QueueEvents } from 'bullmq';
import { Redis } from 'ioredis';
import { StartError } from '../app/lifecycle.js';
import type { ListenerFactory } from '../app/receivers.js';
import { safeRedisUrl } from '../app/redis-connections.js';
import { type RunningBot, startBot } from '../app/start-bot.js';
import { type ChatIo, scriptIo, terminalIo } from '../chat/chat-io.js';
import { failureSummary } from '../chat/chat-text.js';
import { LocalSlackApi } from '../chat/local-slack-api.js';
import { ANSI_STYLE, PLAIN_STYLE, type TerminalStyle } from '../chat/render-terminal.js';
import { TerminalChat } from '../chat/terminal-chat.js';
import { TerminalReceiver } from '../chat/terminal-receiver.js';
import { DEMO_COMMAND } from '../cli-options/commands.js';
import { readCommandArgs } from '../cli-options/options.js';
import { createInfraClient, resolveRoutes, staticToken } from '../cloud/index.js';
import { unavailableIn } from '../commands/availability.js';
import { parseCommand } from '../commands/parse-command.js';
import { ConfigError, parseConfig } from '../config.js';
import { AppError } from '../errors.js';
import { createQueue, QUEUE_NAME, QUEUE_PREFIX } from '../jobs/queue.js';
import { createLogger, type Logger, redactText } from '../log/logger.js';
import { countNoun } from '../render/count-noun.js';
import { type RunningSim, startSim } from '../sim/start-sim.js';
import { createSlackApp } from '../slack/create-slack-app.js';
import { ensureBinary } from '../sys/ensure-binary.js';
import { startPrivateRedis } from '../sys/private-redis.js';
import { parseDemoArgs, scriptFileProblem } from './demo-args.js';
import {
  ADA,
  DEMO_BOT_ID,
  DEMO_BOT_USER_ID,
  DEMO_CHANNEL,
  DEMO_CHANNELS,
  DEMO_PEOPLE,
  DEMO_ROLES,
  DEMO_TEAM_ID,
} from './demo-people.js';
import { demoPolicyYaml } from './demo-policy.js';
import { ensureChartFonts } from './ensure-fonts.js';
import { canRead, SEED_INSTANCE, waitForFirstSamples } from './first-samples.js';
import { askResearchPrices, countResearchSpend, seedResearchProject } from './research-project.js';
import { createSettler } from './settle.js';
// `gpuops demo`: the whole system on one machine with no Slack workspace and no cloud account. The
// simulator (with its Prometheus), a private Redis, the bot's own listeners and workers composed by
// startBot exactly as `gpuops start` composes them, and a terminal chat in place of Slack. Ctrl-C,
// /quit or the end of input stops everything it started and removes its temporary folders.

export interface DemoStdio {
  readonly stdin: Readable & { isTTY?: boolean };
  readonly stdout: Writable & { isTTY?: boolean };
  readonly stderr: Writable;
}

/** The machine that comes up, in the order it came up; closed in reverse. */
interface Started {
  readonly what: string;
  close(): Promise<unknown>;
}

/** `gpuops demo [options]`: returns the exit code (0, 1 when a script line failed or start-up failed, 2 for usage). */
export async function runDemo(
  args: readonly string[],
  env: Readonly<Record<string, string | undefined>>,
  stdio: DemoStdio = { stdin: process.stdin, stdout: process.stdout, stderr: process.stderr },
): Promise<number> {
  const read = readCommandArgs(DEMO_COMMAND, () => parseDemoArgs(args), stdio);
  if ('exit' in read) return read.exit;
  const options = read.options;
  const fromFile = options.script !== undefined && options.script !== '-';
  const unreadable = fromFile ? await scriptFileProblem(options.script!) : undefined;
  if (unreadable) {
    stdio.stderr.write(`gpuops demo: ${unreadable}\n`);
    return 2;
  }
  const interactive = options.script === undefined && stdio.stdin.isTTY === true;
  const color = interactive && stdio.stdout.isTTY === true && !env.NO_COLOR;
  const style: TerminalStyle = color ? ANSI_STYLE : PLAIN_STYLE;
  const io: ChatIo = interactive
    ? terminalIo(stdio.stdin, stdio.stdout)
    : scriptIo(fromFile ? createReadStream(options.script!) : stdio.stdin, stdio.stdout);
  const say = (line: string) => io.print([line]);
  const note = (line: string) => io.print([style.dim(`· ${line}`)]);

  const started: Started[] = [];
  let chat: TerminalChat | undefined;
  let stopping = false;
  let interrupted = false;
  const aborted = new AbortController();
  const onSignal = () => {
    if (stopping) {
      // A second signal: leave now; redis-server and Prometheus are stopped by their exit hooks.
      stdio.stderr.write('gpuops demo: stopping at once.\n');
      process.exit(130);
    }
    stopping = true;
    interrupted = true;
    aborted.abort();
    chat?.interrupt();
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  io.onInterrupt(onSignal);

  let logStream: WriteStream | undefined;
  let log: Logger;
  if (options.logFile) {
    logStream = createWriteStream(options.logFile, { flags: 'a' });
    log = createLogger({ level: env.LOG_LEVEL ?? 'info', destination: logStream });
  } else {
    log = createLogger({
      level: env.LOG_LEVEL ?? 'error',
      destination: { write: (line: string) => void stdio.stderr.write(line) },
    });
  }

  // A stray rejection in some library's background work is logged, not the end of the demo.
  const onRejection = (err: unknown) => log.error({ err }, 'unhandled promise rejection');
  process.on('unhandledRejection', onRejection);

  let code = 0;
  let tmp: string | undefined;
  let filesDir: string | undefined;
  try {
    say(
      style.bold(`gpuops demo · shape ${options.shape} · everything runs on this machine; nothing leaves it`),
    );
    tmp = await mkdtemp(join(tmpdir(), 'gpuops-demo-'));
    filesDir = options.filesDir ?? join(tmp, 'files');

    // --- Redis -------------------------------------------------------------------------------------
    let redisUrl: string;
    if (env.REDIS_URL) {
      redisUrl = env.REDIS_URL;
      note(`Redis: ${safeRedisUrl(redisUrl)} (REDIS_URL)`);
    } else {
      const redis = await startPrivateRedis({ install: true, log: note });
      started.push({ what: 'Redis', close: () => redis.close() });
      redisUrl = redis.url;
      note(`Redis: a private redis-server on 127.0.0.1:${redis.port}, data in ${redis.dir}`);
    }
    if (aborted.signal.aborted) return 130;

    // The demo's workers must not share a queue with a gpuops already running on that Redis.
    const queueRedis = new Redis(redisUrl, { maxRetriesPerRequest: 1, lazyConnect: true });
    const eventsRedis = new Redis(redisUrl, { maxRetriesPerRequest: null, lazyConnect: true });
    queueRedis.on('error', () => {});
    eventsRedis.on('error', () => {});
    started.push({
      what: 'queue watch',
      close: async () => {
        queueRedis.disconnect();
        eventsRedis.disconnect();
      },
    });
    try {
      await queueRedis.connect();
    } catch (err) {
      throw new StartError(
        `Could not reach Redis at ${safeRedisUrl(redisUrl)} (${redactText((err as Error).message)}): check REDIS_URL, or unset it to let the demo run its own.`,
      );
    }
    const queue = createQueue(queueRedis);
    // Client names carry the queue but not the database: only workers on this database share it.
    const db = String(queueRedis.options.db ?? 0);
    const workers = (await queue.getWorkers().catch(() => [])).filter((w) => w.db === db).length;
    if (workers > 0) {
      throw new StartError(
        `REDIS_URL already has ${workers} gpuops worker(s) on its queue: the demo would take their jobs. Point REDIS_URL at another Redis or database index (redis://host:6379/9), or unset it.`,
      );
    }
    const events = new QueueEvents(QUEUE_NAME, { connection: eventsRedis, prefix: QUEUE_PREFIX });
    events.on('error', () => {});
    started.push({
      what: 'queue events',
      close: async () => {
        await events.close().catch(() => {});
        await queue.close().catch(() => {});
      },
    });

    // --- The cloud simulator and its Prometheus ---------------------------------------------------
    let metrics = options.metrics;
    if (metrics) {
      try {
        await ensureBinary('prometheus', {
          debianPackage: 'prometheus',
          install: true,
          log: note,
          otherwise: 'install Prometheus 2.x and put it on PATH',
        });
      } catch (err) {
        metrics = false;
        note(`GPU metrics are off: ${(err as Error).message}`);
      }
    } else {
      note('GPU metrics are off (--no-metrics).');
    }
    const fonts = metrics ? await ensureChartFonts(note) : false;
    const sim: RunningSim = await startSim({
      shape: options.shape,
      port: 0,
      host: '127.0.0.1',
      metrics,
      transitionMs: options.transitionMs,
      log: (line) => log.debug({ component: 'sim' }, line),
    });
    started.push({ what: 'simulator', close: () => sim.close() });
    const metricsOn = sim.info.metricsAvailable && fonts;
    if (metrics && !sim.info.metricsAvailable) note(`GPU metrics are off: ${sim.info.metricsNote}`);
    note(
      `Cloud simulator: shape ${options.shape} at ${sim.info.cloudUrl.replace(/\/api\/v1alpha1$/, '')}${sim.info.metricsAvailable ? ', with Prometheus behind /read' : ''}`,
    );
    const researchId = await seedResearchProject({ ...sim.info, shape: options.shape }, note);
    if (aborted.signal.aborted) return 130;

    // --- Slack, here in the terminal ---------------------------------------------------------------
    const botToken = `xoxb-demo-${randomBytes(12).toString('hex')}`;
    const slack = await LocalSlackApi.start({
      tokens: [botToken],
      teamId: DEMO_TEAM_ID,
      botUserId: DEMO_BOT_USER_ID,
      botId: DEMO_BOT_ID,
      botName: 'gpuops',
      users: DEMO_PEOPLE,
      channels: DEMO_CHANNELS,
      filesDir,
      print: (lines) => io.print(lines),
      style,
      viewer: () => chat?.currentUser ?? ADA,
      onUnknownMethod: (method) => log.warn({ method }, 'the demo Slack API does not know this method'),
    });
    started.push({ what: 'local Slack API', close: () => slack.close() });

    // --- The bot: the same listeners and workers as `gpuops start` ---------------------------------
    const policyFile = join(tmp, 'policy.yaml');
    await writeFile(policyFile, demoPolicyYaml(researchId, options.budgetUsd));
    const config = parseConfig(
      {
        SLACK_BOT_TOKEN: botToken,
        // No HTTP receiver runs: the terminal receiver takes the place of POST /slack/events.
        SLACK_SIGNING_SECRET: randomBytes(16).toString('hex'),
        SLACK_API_URL: slack.apiUrl,
        PORT: '0',
        OPS_PORT: '0',
        REDIS_URL: redisUrl,
        ROLE: 'all',
        LOG_LEVEL: env.LOG_LEVEL ?? (options.logFile ? 'info' : 'error'),
        GPUOPS_POLICY: policyFile,
        CLOUD_API_URL: sim.info.cloudUrl,
        CLOUD_API_SHAPE: options.shape,
        CLOUD_API_TOKEN: sim.info.cloudToken,
        CLOUD_PROJECT_ID: sim.info.projectId,
        PLATFORM_API_URL: sim.info.platformUrl,
        PLATFORM_API_KEY: sim.info.platformApiKey,
        ...(metricsOn ? { METRICS_URL: sim.info.metricsUrl, METRICS_API_KEY: sim.info.metricsApiKey } : {}),
      },
      'bot',
    );
    let receiver: TerminalReceiver | undefined;
    const listener: ListenerFactory = async (deps, slackOptions) => {
      const terminal = new TerminalReceiver();
      createSlackApp(terminal, slackOptions, deps);
      await terminal.start();
      receiver = terminal;
      return { stop: () => terminal.stop() };
    };
    const bot: RunningBot = await startBot(config, {
      role: 'all',
      log,
      host: '127.0.0.1',
      listener,
      shutdownGraceMs: 5_000,
      // Simulated machines settle in seconds: look often, so the chat shows it soon.
      workerTiming: { pollStartMs: 250, pollMaxMs: 1_000 },
    });
    started.push({ what: 'listener and workers', close: () => bot.stop() });
    if (!receiver) throw new Error('the terminal receiver did not start');
    note(`Bot: listener and workers running (health and metrics on http://127.0.0.1:${bot.port}/healthz)`);

    // A machine to look at from the first minute, so /gpu metrics has something to draw.
    const cloud = createInfraClient({
      baseUrl: sim.info.cloudUrl,
      shape: options.shape,
      tokens: staticToken(sim.info.cloudToken),
      projectId: sim.info.projectId,
    });
    try {
      await cloud.createInstance({ name: SEED_INSTANCE.name, type: SEED_INSTANCE.type });
      note(
        `A machine ${SEED_INSTANCE.name} (${SEED_INSTANCE.type}) is starting, to try /gpu show and /gpu metrics on.`,
      );
    } finally {
      await cloud.close();
    }
    if (metricsOn && !interactive) {
      note(`Waiting for Prometheus' first samples of ${SEED_INSTANCE.name}…`);
      const ready = await waitForFirstSamples(sim.info.metricsUrl, sim.info.metricsApiKey, aborted.signal);
      if (!ready && !aborted.signal.aborted)
        note('Prometheus has no samples yet; /gpu metrics may say so at first.');
    } else if (metricsOn) {
      void waitForFirstSamples(sim.info.metricsUrl, sim.info.metricsApiKey, aborted.signal).then((ready) => {
        if (ready && !stopping)
          note(`Prometheus has its first samples: try /gpu metrics ${SEED_INSTANCE.name}.`);
      });
    }
    if (aborted.signal.aborted) return 130;

    // The first catalogue refresh caches types and prices: costs are known from the first request.
    await askResearchPrices(queue, researchId);
    const settle = createSettler({ queue, events, slack, timeoutMs: options.timeoutMs });
    const warm = await settle();
    if (!warm.ok) note(`Still loading (${warm.pending}); prices may show as unknown at first.`);
    // Counted once prices are cached; settled again so the alert's chart and DM come before the prompt.
    await countResearchSpend({ store: bot.parts.store, slack, projectId: researchId, note }, aborted.signal);
    await settle();
    if (aborted.signal.aborted) return 130;

    // --- The chat --------------------------------------------------------------------------------
    const routes = resolveRoutes(options.shape);
    chat = new TerminalChat({
      receiver,
      slack,
      io,
      style,
      teamId: DEMO_TEAM_ID,
      people: DEMO_PEOPLE,
      roles: DEMO_ROLES,
      channels: DEMO_CHANNELS,
      userId: ADA,
      channelId: DEMO_CHANNEL,
      settle,
      refusal: (text) => {
        const parsed = parseCommand(text);
        // The bot's answer gives the reason; this is said only if it gave none.
        if (!parsed.ok) return 'gpuops did not understand the line';
        return unavailableIn(parsed.command, options.shape, routes) ?? undefined;
      },
    });
    say(
      `Ready. You are ada (Ada Lovelace) in #gpu-ops; bob approves. Type /gpu help for the bot, /help for this chat, /quit to leave.`,
    );
    say('');
    const result = await chat.run();
    if (result.ended === 'interrupted') interrupted = true;
    if (result.failures.length > 0 && !io.interactive) {
      code = 1;
      stdio.stderr.write(`gpuops demo: ${failureSummary(result.failures, result.lines)}\n`);
    }
  } catch (err) {
    code = 1;
    const message =
      err instanceof ConfigError || err instanceof AppError
        ? err.message
        : redactText((err as Error)?.message ?? String(err));
    log.error({ err }, 'gpuops demo failed');
    stdio.stderr.write(`gpuops demo: ${message}\n`);
  } finally {
    stopping = true;
    aborted.abort();
    io.close();
    const names: string[] = [];
    for (const part of started.reverse()) {
      try {
        await part.close();
        names.push(part.what);
      } catch (err) {
        stdio.stderr.write(
          `gpuops demo: could not stop the ${part.what} cleanly: ${(err as Error).message}\n`,
        );
      }
    }
    const kept = options.filesDir === undefined && filesDir !== undefined && (await canRead(filesDir));
    const savedFiles = kept && filesDir ? (await readdir(filesDir)).length : 0;
    if (tmp) await rm(tmp, { recursive: true, force: true });
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    process.off('unhandledRejection', onRejection);
    if (names.length > 0 || tmp) {
      io.print([
        style.dim(
          `· Stopped ${names.filter((n) => !n.startsWith('queue')).join(', ') || 'nothing'}; removed ${tmp ?? 'nothing'}${savedFiles > 0 ? ` with the ${countNoun(savedFiles, 'file')} shown (use --files DIR to keep them)` : ''}.`,
        ),
      ]);
    }
    if (logStream) await new Promise<void>((r) => logStream!.end(() => r()));
    else log.flush();
  }
  return interrupted && code === 0 && !io.interactive ? 130 : code;
}
