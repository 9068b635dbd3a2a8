import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTracing, type Tracing } from '../../src/app/tracing.js';
import type { GpuCommand } from '../../src/commands/registry.js';
import { parseConfig } from '../../src/config.js';
import type { JobContext } from '../../src/jobs/job-data.js';
import { createLogger } from '../../src/log/logger.js';
import { acceptRequest } from '../../src/requests/accept-request.js';
import { OtlpReceiver } from '../fakes/otlp-receiver.js';
import {
  DEFAULT_PROJECT,
  expectCleanSlack,
  type ListenerStack,
  policyOf,
  startListenerStack,
} from '../support/listener-stack.js';

// The accept step in a trace (docs/operations.md, "Traces"): with tracing on, each request is one
// `gpuops.accept` span naming its kind, its outcome and the request it became, exported over OTLP/HTTP
// by the real OpenTelemetry SDK to a small collector. Ada operates; Vic only views.

const POLICY = policyOf(
  'accept-traced.yaml',
  'default_role: viewer',
  'roles:',
  '  operator: { users: [U0ADA] }',
);

describe('the accept step with tracing on', () => {
  let receiver: OtlpReceiver;
  let tracing: Tracing | undefined;
  let stack: ListenerStack;
  beforeAll(async () => {
    receiver = await OtlpReceiver.start();
    tracing = await startTracing(
      parseConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url }),
      createLogger({ level: 'silent' }),
    );
    stack = await startListenerStack(() => {}, { policy: POLICY });
    await stack.machines('tr-1', 'tr-2');
  });
  afterAll(async () => {
    await tracing?.shutdown();
    expectCleanSlack(stack);
    await stack?.close();
    await receiver?.close();
  });

  const ctx = (userId: string): JobContext => ({
    teamId: 'T0FAKE',
    channelId: 'C0GPU',
    userId,
    projectId: DEFAULT_PROJECT,
    requestedAt: Date.now(),
  });
  const stop = (instance: string) => ({ kind: 'stop', instance }) as GpuCommand;

  it('gives each request one span with its kind, its outcome and the job it became', async () => {
    const queued = await acceptRequest(stack.deps, stop('tr-1'), ctx('U0ADA'));
    if (queued.status !== 'queued') throw new Error(`expected queued, got ${queued.status}`);
    const refused = await acceptRequest(stack.deps, stop('tr-2'), ctx('U0VIC'));
    expect(refused.status).toBe('refused');
    // Shutting the SDK down sends every span still buffered.
    await tracing?.shutdown();
    tracing = undefined;
    const spans = receiver.spans.filter((s) => s.name === 'gpuops.accept');
    expect(spans.map((s) => s.attributes)).toEqual([
      { 'gpuops.command.kind': 'stop', 'gpuops.outcome': 'queued', 'gpuops.request.id': queued.jobId },
      { 'gpuops.command.kind': 'stop', 'gpuops.outcome': 'refused' },
    ]);
  });
});
