import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { envSchema } from '../../src/config.js';

// The Kubernetes objects an operator applies must point at things that exist: env keys the config
// reads, the probe routes and port the web role serves, the commands the CLI has.

// biome-ignore lint/suspicious/noExplicitAny: Kubernetes objects read back as YAML, only for assertions
type K8sObject = any;
const dir = new URL('../../manifests/kubernetes/', import.meta.url);
const objects: K8sObject[] = readdirSync(dir)
  .filter((f) => f.endsWith('.yaml') && f !== 'kustomization.yaml')
  .flatMap((f) => parseAllDocuments(readFileSync(new URL(f, dir), 'utf8')).map((d) => d.toJS()));
const byKind = (kind: string) => objects.filter((o) => o.kind === kind);
const envKeys = new Set(Object.keys(envSchema.shape));
const gpuopsDeployments = byKind('Deployment').filter(
  (d) => d.metadata.labels['app.kubernetes.io/name'] === 'gpuops',
);

describe('Kubernetes manifests', () => {
  it('parse, and hold the objects an operator needs', () => {
    const kinds = objects.map((o) => `${o.kind}/${o.metadata.name}`);
    for (const expected of [
      'Deployment/gpuops-web',
      'Service/gpuops-web',
      'Deployment/gpuops-worker',
      'HorizontalPodAutoscaler/gpuops-worker',
      'PodDisruptionBudget/gpuops-web',
      'PodDisruptionBudget/gpuops-worker',
      'Secret/gpuops',
      'ConfigMap/gpuops',
      'StatefulSet/gpuops-redis',
    ]) {
      expect(kinds).toContain(expected);
    }
  });

  it('set only environment keys that src/config.ts reads', () => {
    const config = byKind('ConfigMap')[0];
    const secret = byKind('Secret')[0];
    const keys = [
      ...Object.keys(config.data).filter((k) => k !== 'policy.yaml'),
      ...Object.keys(secret.stringData),
      ...gpuopsDeployments.flatMap((d) =>
        d.spec.template.spec.containers.flatMap((c: K8sObject) => c.env ?? []).map((e: K8sObject) => e.name),
      ),
    ];
    expect(keys.filter((k) => !envKeys.has(k))).toEqual([]);
    expect(config.data.GPUOPS_POLICY).toBe('/etc/gpuops/policy.yaml');
  });

  it('probe the routes the process serves, on the operations port, with a role the CLI knows', () => {
    const data = byKind('ConfigMap')[0].data;
    const opsPort = Number(data.OPS_PORT);
    expect(opsPort).not.toBe(Number(data.PORT));
    for (const d of gpuopsDeployments) {
      const c = d.spec.template.spec.containers[0];
      expect(['web', 'worker', 'start']).toContain(c.args[0]);
      const ops = c.ports.find((p: K8sObject) => p.containerPort === opsPort);
      expect(ops).toBeDefined();
      expect(c.readinessProbe.httpGet).toEqual({ path: '/readyz', port: ops.name });
      expect(c.livenessProbe.httpGet).toEqual({ path: '/healthz', port: ops.name });
      expect(d.spec.template.spec.securityContext.runAsNonRoot).toBe(true);
    }
  });

  it('expose only the Slack port through the Service: /metrics and /readyz stay inside the cluster', () => {
    const port = Number(byKind('ConfigMap')[0].data.PORT);
    const service = byKind('Service').find((s) => s.metadata.name === 'gpuops-web');
    const web = gpuopsDeployments.find((d) => d.metadata.name === 'gpuops-web');
    const containerPorts = web.spec.template.spec.containers[0].ports;
    const exposed = service.spec.ports.map(
      (p: K8sObject) => containerPorts.find((c: K8sObject) => c.name === p.targetPort)?.containerPort,
    );
    expect(exposed).toEqual([port]);
  });

  it('scale the workers on their own and keep one of each role through disruptions', () => {
    const hpa = byKind('HorizontalPodAutoscaler')[0];
    expect(hpa.spec.scaleTargetRef.name).toBe('gpuops-worker');
    for (const pdb of byKind('PodDisruptionBudget')) {
      const target = gpuopsDeployments.find((d) => d.metadata.name === pdb.metadata.name);
      expect(target.spec.selector.matchLabels).toEqual(pdb.spec.selector.matchLabels);
    }
    const service = byKind('Service').find((s) => s.metadata.name === 'gpuops-web');
    const web = gpuopsDeployments.find((d) => d.metadata.name === 'gpuops-web');
    expect(web.spec.template.metadata.labels).toMatchObject(service.spec.selector);
  });

  it('run Redis as the queue needs it: no eviction, append-only file', () => {
    const args = byKind('StatefulSet')[0].spec.template.spec.containers[0].args.join(' ');
    expect(args).toContain('--maxmemory-policy noeviction');
    expect(args).toContain('--appendonly yes');
  });
});
