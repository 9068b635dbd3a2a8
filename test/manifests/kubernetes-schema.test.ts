import { readdirSync, readFileSync } from 'node:fs';
import { Deployment } from 'kubernetes-models/apps/v1/Deployment';
import { StatefulSet } from 'kubernetes-models/apps/v1/StatefulSet';
import { HorizontalPodAutoscaler } from 'kubernetes-models/autoscaling/v2/HorizontalPodAutoscaler';
import { NetworkPolicy } from 'kubernetes-models/networking.k8s.io/v1/NetworkPolicy';
import { PodDisruptionBudget } from 'kubernetes-models/policy/v1/PodDisruptionBudget';
import { ConfigMap } from 'kubernetes-models/v1/ConfigMap';
import { Secret } from 'kubernetes-models/v1/Secret';
import { Service } from 'kubernetes-models/v1/Service';
import { describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';

// Every object in manifests/kubernetes validates against the Kubernetes API's own OpenAPI schemas, as
// the kubernetes-models package ships them (types, required fields, quantities, enums), so a typo in
// a field an operator relies on fails here rather than at `kubectl apply`. What the objects must say
// about the code (ports, routes, env keys) is kubernetes.test.ts.

interface K8sObject {
  readonly apiVersion: string;
  readonly kind: string;
  readonly metadata: { readonly name: string; readonly labels?: Record<string, string> };
  // biome-ignore lint/suspicious/noExplicitAny: the rest of the object is what the schema checks
  readonly [key: string]: any;
}
interface Model {
  validate(): void;
}
type ModelClass = new (data: K8sObject) => Model;

const dir = new URL('../../manifests/kubernetes/', import.meta.url);
const files = readdirSync(dir).filter((f) => f.endsWith('.yaml') && f !== 'kustomization.yaml');
const objects = files.flatMap((file) =>
  parseAllDocuments(readFileSync(new URL(file, dir), 'utf8')).map((d) => ({
    file,
    object: d.toJS() as K8sObject,
  })),
);

/** The schema of each apiVersion and kind the kit uses; a new kind must be added here to be checked. */
const MODELS: Record<string, ModelClass> = {
  'apps/v1 Deployment': Deployment as unknown as ModelClass,
  'apps/v1 StatefulSet': StatefulSet as unknown as ModelClass,
  'autoscaling/v2 HorizontalPodAutoscaler': HorizontalPodAutoscaler as unknown as ModelClass,
  'networking.k8s.io/v1 NetworkPolicy': NetworkPolicy as unknown as ModelClass,
  'policy/v1 PodDisruptionBudget': PodDisruptionBudget as unknown as ModelClass,
  'v1 ConfigMap': ConfigMap as unknown as ModelClass,
  'v1 Secret': Secret as unknown as ModelClass,
  'v1 Service': Service as unknown as ModelClass,
};

async function problems(object: K8sObject): Promise<string | undefined> {
  const Model = MODELS[`${object.apiVersion} ${object.kind}`];
  if (!Model) return `no schema here for ${object.apiVersion} ${object.kind}: add it to MODELS`;
  try {
    new Model(object).validate();
    return undefined;
  } catch (err) {
    return (err as Error).message;
  }
}

describe('Kubernetes manifests against the API schemas', () => {
  it('finds the manifests', () => {
    expect(objects.length).toBeGreaterThanOrEqual(10);
  });

  it.each(objects.map(({ file, object }) => [`${file}: ${object.kind}/${object.metadata?.name}`, object]))(
    '%s is a valid object',
    async (_name, object) => {
      expect(await problems(object as K8sObject)).toBeUndefined();
    },
  );

  it('rejects an object the API would reject (the validator is really checking)', async () => {
    const web = objects.find((o) => o.object.kind === 'Deployment')!.object;
    const broken = structuredClone(web);
    broken.spec.template.spec.containers[0].resources.limits.memory = 'lots';
    delete broken.spec.template.spec.containers[0].name;
    const message = await problems(broken);
    expect(message).toMatch(/memory/);
    expect(message).toMatch(/name/);
  });
});

describe('what operators expect of the kit', () => {
  const workloads = objects
    .map((o) => o.object)
    .filter((o) => o.kind === 'Deployment' || o.kind === 'StatefulSet');

  it.each(workloads.map((w) => [w.metadata.name, w]))(
    '%s: non-root, no privilege escalation, read-only root, no capabilities, with requests and limits',
    (_name, workload) => {
      const pod = (workload as K8sObject).spec.template.spec;
      expect(pod.securityContext.runAsNonRoot).toBe(true);
      expect(pod.automountServiceAccountToken).toBe(false);
      for (const c of pod.containers) {
        expect(c.securityContext).toMatchObject({
          allowPrivilegeEscalation: false,
          readOnlyRootFilesystem: true,
          capabilities: { drop: ['ALL'] },
        });
        expect(c.resources.requests.cpu).toBeDefined();
        expect(c.resources.requests.memory).toBeDefined();
        expect(c.resources.limits.memory).toBeDefined();
        expect(c.readinessProbe).toBeDefined();
        expect(c.livenessProbe).toBeDefined();
      }
    },
  );

  it('lets only the web and worker pods reach Redis', () => {
    const policy = objects.map((o) => o.object).find((o) => o.kind === 'NetworkPolicy')!;
    const redis = workloads.find((w) => w.kind === 'StatefulSet')!;
    expect(redis.spec.template.metadata.labels).toMatchObject(policy.spec.podSelector.matchLabels);
    expect(policy.spec.policyTypes).toEqual(['Ingress']);
    const [rule] = policy.spec.ingress;
    expect(rule.ports).toEqual([{ protocol: 'TCP', port: 6379 }]);
    const [from] = rule.from;
    expect(from.podSelector.matchExpressions).toEqual(
      expect.arrayContaining([
        { key: 'app.kubernetes.io/name', operator: 'In', values: ['gpuops'] },
        { key: 'app.kubernetes.io/component', operator: 'In', values: ['web', 'worker'] },
      ]),
    );
    // The gpuops pods carry exactly those labels.
    for (const w of workloads.filter((x) => x.metadata.labels?.['app.kubernetes.io/name'] === 'gpuops')) {
      expect(['web', 'worker']).toContain(w.spec.template.metadata.labels['app.kubernetes.io/component']);
    }
  });
});
