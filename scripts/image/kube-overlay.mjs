// The Kubernetes kit as `podman kube play` runs it (scripts/image/kube-play.sh): manifests/kubernetes
// unchanged on disk, rewritten here for one machine without a registry or a cluster:
//   - images: the locally built ones, never pulled (imagePullPolicy: Never), one replica each;
//   - the Redis StatefulSet becomes a Deployment (podman plays no StatefulSet) with an emptyDir;
//   - the ConfigMap and Secret get the smoke test's endpoints and credentials (from the environment);
//     the Secret's keys travel as a ConfigMap (podman 4 reads secretRef from its own secret store);
//   - no containerPorts (podman would publish them all on the host), probes by port number;
//   - hostAliases stand in for cluster DNS (names → the static IPs kube-play.sh gives the pods);
//   - what podman does not run (Service, HPA, PDB, NetworkPolicy) is left out: the vitest schema test
//     checks those.
// Usage: node kube-overlay.mjs <manifests dir> > kit.yaml, with KUBE_* variables set.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseAllDocuments, stringify } from 'yaml';

const env = process.env;
const need = (key) => {
  const value = env[key];
  if (value === undefined || value === '') throw new Error(`kube-overlay: ${key} is not set`);
  return value;
};
const dir = process.argv[2] ?? 'manifests/kubernetes';
const objects = readdirSync(dir)
  .filter((f) => f.endsWith('.yaml') && f !== 'kustomization.yaml')
  .sort()
  .flatMap((f) => parseAllDocuments(readFileSync(join(dir, f), 'utf8')).map((d) => d.toJS()));

/** KUBE_HOSTS: "name=ip,name=ip" → hostAliases. */
const hostAliases = need('KUBE_HOSTS')
  .split(',')
  .map((pair) => pair.split('='))
  .map(([name, ip]) => ({ ip, hostnames: [name] }));
/** KUBE_CONFIG_JSON / KUBE_SECRET_JSON: values laid over the ConfigMap's data and the Secret's stringData. */
const configOverlay = JSON.parse(need('KUBE_CONFIG_JSON'));
const secretOverlay = JSON.parse(need('KUBE_SECRET_JSON'));

const out = [];
for (const o of objects) {
  if (o.kind === 'ConfigMap') {
    out.push({ ...o, data: { ...o.data, ...configOverlay } });
  } else if (o.kind === 'Secret') {
    // Podman 4 reads a secretRef from its own secret store, in a form that differs between versions:
    // the kit carries the Secret's keys as a ConfigMap instead (only here, never in the manifests).
    out.push({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: `${o.metadata.name}-secret`, labels: o.metadata.labels },
      data: { ...o.stringData, ...secretOverlay },
    });
  } else if (o.kind === 'Deployment' || o.kind === 'StatefulSet') {
    const redis = o.kind === 'StatefulSet';
    const pod = structuredClone(o.spec.template.spec);
    pod.hostAliases = hostAliases;
    for (const c of pod.containers) {
      c.envFrom = (c.envFrom ?? []).map((from) =>
        from.secretRef ? { configMapRef: { name: `${from.secretRef.name}-secret` } } : from,
      );
      // Podman publishes every containerPort on the host (web and worker would both take 9090):
      // no ports, and the probes name the port by number.
      const byName = Object.fromEntries((c.ports ?? []).map((p) => [p.name, p.containerPort]));
      for (const probe of [c.readinessProbe, c.livenessProbe, c.startupProbe]) {
        const action = probe?.httpGet ?? probe?.tcpSocket;
        if (action && typeof action.port === 'string') action.port = byName[action.port];
      }
      delete c.ports;
      c.image = need(redis ? 'KUBE_REDIS_IMAGE' : 'KUBE_APP_IMAGE');
      c.imagePullPolicy = 'Never';
    }
    if (redis) {
      pod.volumes = [
        ...(pod.volumes ?? []),
        ...(o.spec.volumeClaimTemplates ?? []).map((t) => ({ name: t.metadata.name, emptyDir: {} })),
      ];
    }
    out.push({
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: o.metadata,
      spec: { replicas: 1, selector: o.spec.selector, template: { ...o.spec.template, spec: pod } },
    });
  }
}
// Redis first: kube-play.sh gives the pods their IPs in this order (KUBE_HOSTS lists them so).
const order = (o) => (o.kind !== 'Deployment' ? 0 : o.metadata.name === 'gpuops-redis' ? 1 : 2);
out.sort((a, b) => order(a) - order(b) || a.metadata.name.localeCompare(b.metadata.name));
process.stdout.write(out.map((o) => stringify(o)).join('---\n'));
