import { execFile } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { Deployment } from 'kubernetes-models/apps/v1/Deployment';
import { StatefulSet } from 'kubernetes-models/apps/v1/StatefulSet';
import { HorizontalPodAutoscaler } from 'kubernetes-models/autoscaling/v2/HorizontalPodAutoscaler';
import { NetworkPolicy } from 'kubernetes-models/networking.k8s.io/v1/NetworkPolicy';
import { PodDisruptionBudget } from 'kubernetes-models/policy/v1/PodDisruptionBudget';
import { ConfigMap } from 'kubernetes-models/v1/ConfigMap';
import { Service } from 'kubernetes-models/v1/Service';
import { beforeAll, describe, expect, it } from 'vitest';
import { parse, parseAllDocuments } from 'yaml';
import { monitoringFiles } from '../../scripts/monitoring-objects.js';
import { parseConfig } from '../../src/config.js';
import { findBinary } from '../../src/sys/ensure-binary.js';

// The Kubernetes kit as kustomize renders it (`kubectl kustomize`, as `kubectl apply -k` would): the
// base (manifests/kubernetes), the Sentinel and Cluster overlays with the monitoring component
// (deploy/kubernetes/), every object valid against the Kubernetes API schemas, the settings a valid
// gpuops configuration, and the PrometheusRule and dashboard the same as deploy/prometheus and
// deploy/grafana.

const run = promisify(execFile);
const root = fileURLToPath(new URL('../../', import.meta.url));
// biome-ignore lint/suspicious/noExplicitAny: Kubernetes objects read back as YAML, for assertions
type K8sObject = any;
type ModelClass = new (data: K8sObject) => { validate(): void };
const MODELS: Record<string, ModelClass> = {
  'apps/v1 Deployment': Deployment as unknown as ModelClass,
  'apps/v1 StatefulSet': StatefulSet as unknown as ModelClass,
  'autoscaling/v2 HorizontalPodAutoscaler': HorizontalPodAutoscaler as unknown as ModelClass,
  'networking.k8s.io/v1 NetworkPolicy': NetworkPolicy as unknown as ModelClass,
  'policy/v1 PodDisruptionBudget': PodDisruptionBudget as unknown as ModelClass,
  'v1 ConfigMap': ConfigMap as unknown as ModelClass,
  'v1 Service': Service as unknown as ModelClass,
};
/** The Prometheus Operator's kinds: kubernetes-models has no schema; checked by hand below. */
const OPERATOR_KINDS = new Set([
  'monitoring.coreos.com/v1 PrometheusRule',
  'monitoring.coreos.com/v1 PodMonitor',
]);

let kubectl: string;
beforeAll(async () => {
  const found = findBinary('kubectl');
  if (!found) {
    throw new Error(
      'kubectl is not installed: the kustomize render needs kubectl 1.27 or later (kustomize v5); Debian has none that recent, install it from the Kubernetes packages.',
    );
  }
  kubectl = found;
  const { stdout } = await run(kubectl, ['version', '--client', '-o', 'json']);
  const version = (JSON.parse(stdout) as { kustomizeVersion?: string }).kustomizeVersion ?? 'v0';
  const major = Number(/^v(\d+)/.exec(version)?.[1] ?? 0);
  if (major < 5) {
    throw new Error(
      `kubectl's kustomize is ${version}: the kit uses components and patches, which need kustomize v5 (kubectl 1.27 or later).`,
    );
  }
});

async function render(dir: string): Promise<K8sObject[]> {
  const { stdout } = await run(kubectl, ['kustomize', join(root, dir)], { maxBuffer: 16 * 1024 * 1024 });
  return parseAllDocuments(stdout).map((d) => d.toJS());
}
const id = (o: K8sObject) => `${o.kind}/${o.metadata.name}`;
function problems(o: K8sObject): string | undefined {
  const key = `${o.apiVersion} ${o.kind}`;
  if (OPERATOR_KINDS.has(key)) return undefined;
  const Model = MODELS[key];
  if (!Model) return `no schema here for ${key}`;
  try {
    new Model(o).validate();
    return undefined;
  } catch (err) {
    return (err as Error).message;
  }
}
/** What a gpuops pod reads: the ConfigMap's settings and the Secret's keys (filled with stand-ins). */
function configOf(objects: K8sObject[]) {
  const { 'policy.yaml': _policy, ...data } = objects.find((o) => id(o) === 'ConfigMap/gpuops').data;
  return parseConfig({
    ...data,
    SLACK_BOT_TOKEN: 'xoxb-stand-in',
    SLACK_SIGNING_SECRET: 'stand-in',
    CLOUD_API_TOKEN: 'stand-in',
  });
}

describe('the Kubernetes kit as a kustomize base', () => {
  it('renders the base: every manifest of manifests/kubernetes but the Secret template, each valid', async () => {
    const objects = await render('manifests/kubernetes');
    const dir = join(root, 'manifests/kubernetes');
    const onDisk = readdirSync(dir)
      .filter((f) => f.endsWith('.yaml') && f !== 'kustomization.yaml')
      .flatMap((f) => parseAllDocuments(readFileSync(join(dir, f), 'utf8')).map((d) => d.toJS()))
      .filter((o) => o.kind !== 'Secret');
    expect(objects.map(id).sort()).toEqual(onDisk.map(id).sort());
    expect(objects.map((o) => [id(o), problems(o)]).filter(([, p]) => p)).toEqual([]);
    expect(configOf(objects).REDIS_URL).toBe('redis://gpuops-redis:6379');
  });

  it.each([
    ['sentinel', { REDIS_SENTINELS: expect.any(String), REDIS_SENTINEL_MASTER: expect.any(String) }],
    ['cluster', { REDIS_CLUSTER_NODES: expect.any(String) }],
  ])(
    'renders the %s overlay: gpuops set for it, without the single Redis, with monitoring',
    async (name, wanted) => {
      const objects = await render(`deploy/kubernetes/${name}`);
      expect(objects.map((o) => [id(o), problems(o)]).filter(([, p]) => p)).toEqual([]);
      const ids = objects.map(id);
      expect(ids.filter((i) => i.endsWith('/gpuops-redis'))).toEqual([]);
      for (const kept of ['Deployment/gpuops-web', 'Deployment/gpuops-worker', 'Service/gpuops-web']) {
        expect(ids).toContain(kept);
      }
      expect(ids).toEqual(
        expect.arrayContaining(['PrometheusRule/gpuops', 'PodMonitor/gpuops', 'ConfigMap/gpuops-dashboard']),
      );
      // The settings make a configuration gpuops starts with, on that topology, waiting for a replica.
      const config = configOf(objects);
      expect(config).toMatchObject({ ...wanted, REDIS_WAIT_REPLICAS: 1 });
      // The PodMonitor scrapes a port every gpuops pod has.
      const monitor = objects.find((o) => id(o) === 'PodMonitor/gpuops');
      for (const d of objects.filter((o) => o.kind === 'Deployment')) {
        expect(d.spec.template.metadata.labels).toMatchObject(monitor.spec.selector.matchLabels);
        const ports = d.spec.template.spec.containers.flatMap((c: K8sObject) => c.ports ?? []);
        expect(ports.map((p: K8sObject) => p.name)).toContain(monitor.spec.podMetricsEndpoints[0].port);
      }
    },
  );

  it('carries the rules and the dashboard gpuops ships, and the generated files are up to date', async () => {
    const objects = await render('deploy/kubernetes/sentinel');
    const rule = objects.find((o) => id(o) === 'PrometheusRule/gpuops');
    expect(rule.spec).toEqual(parse(readFileSync(join(root, 'deploy/prometheus/gpuops.rules.yaml'), 'utf8')));
    const dashboard = objects.find((o) => id(o) === 'ConfigMap/gpuops-dashboard');
    expect(dashboard.metadata.labels.grafana_dashboard).toBe('1');
    expect(JSON.parse(dashboard.data['gpuops-dashboard.json'])).toEqual(
      JSON.parse(readFileSync(join(root, 'deploy/grafana/gpuops-dashboard.json'), 'utf8')),
    );
    for (const [file, text] of Object.entries(monitoringFiles())) {
      expect(
        readFileSync(join(root, 'deploy/kubernetes/monitoring', file), 'utf8'),
        `deploy/kubernetes/monitoring/${file} is stale: run npm run manifests`,
      ).toBe(text);
    }
    // The PrometheusRule's spec is a rule file Prometheus accepts.
    const promtool = findBinary('promtool');
    if (promtool) {
      const dir = mkdtempSync(join(tmpdir(), 'gpuops-rule-'));
      try {
        writeFileSync(join(dir, 'rules.yaml'), JSON.stringify(rule.spec));
        const { stdout } = await run(promtool, ['check', 'rules', join(dir, 'rules.yaml')]);
        expect(stdout).toContain('SUCCESS');
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    }
  });
});
