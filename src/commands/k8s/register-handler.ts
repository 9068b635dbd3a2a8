import { CloudConflictError, type KubernetesCluster } from '../../cloud/index.js';
import { k8sClusterBlocks } from '../../render/clusters.js';
import { PermanentJobError } from '../../workers/job-errors.js';
import type { JobRun, Outcome } from '../../workers/job-run.js';
import { sealedInput } from '../kit/sealed-input.js';
import { withArguments } from '../kit/with-arguments.js';
import type { CommandOf } from '../registry.js';

// `/gpu k8s register` (shape A): registers an existing cluster from the kubeconfig typed into the form.
// The kubeconfig reaches this handler sealed (src/store/sealed.ts) and goes to the cloud alone: never
// into the job's data, progress, messages or logs. Idempotent by name like every create: a retry after
// the request went out adopts the one cluster of that name instead of registering it twice.

type RegisterProgress = { clusterId: string; sent: boolean };

function taken(name: string): PermanentJobError {
  return new PermanentJobError(
    `A Kubernetes cluster named ${name} already exists in this project; register this one under another name.`,
  );
}

export async function registerK8sCluster(run: JobRun, request: CommandOf<'k8s.register'>): Promise<Outcome> {
  const command = withArguments(request);
  const { cloud } = run.deps;
  let clusterId = run.progress<RegisterProgress>().clusterId;
  let cluster: KubernetesCluster | undefined;
  if (!clusterId) {
    const existing = (await cloud.listK8sClusters(run.call)).filter((c) => c.name === command.name);
    if (existing.length === 1 && run.progress<RegisterProgress>().sent === true) {
      cluster = existing[0]!;
    } else if (existing.length > 0) {
      throw taken(command.name);
    } else {
      const kubeconfig = await sealedInput(run, 'kubeconfig');
      if (kubeconfig === undefined) {
        throw new PermanentJobError(
          'This request carries no kubeconfig; open the form with `/gpu k8s register` and paste it there.',
        );
      }
      await run.update('working', `Registering Kubernetes cluster ${command.name}…`);
      await run.saveProgress({ sent: true });
      try {
        cluster = await cloud.registerK8sCluster(
          {
            name: command.name,
            kubeconfig,
            ...(Object.keys(command.labels).length > 0 ? { labels: command.labels } : {}),
          },
          run.call,
        );
      } catch (err) {
        if (err instanceof CloudConflictError) throw taken(command.name);
        throw err;
      }
    }
    clusterId = cluster.id;
    await run.saveProgress({ clusterId });
  }
  cluster ??= await cloud.getK8sCluster({ id: clusterId }, run.call);
  const status = cluster.status?.type;
  return {
    detail: `Kubernetes cluster ${cluster.name} is registered${status ? ` (${status})` : ''}.`,
    result: k8sClusterBlocks(cluster),
  };
}
