import { escapeText } from '../../render/job-message.js';
import type { JobRun, Outcome } from '../../workers/job-run.js';
import { resolveRef } from '../kit/resolve.js';
import type { CommandOf } from '../registry.js';

// `/gpu k8s kubeconfig <cluster>`: the kubeconfig goes to the requester alone, as a file in a direct
// message. It is read as late as possible and lives only in one local variable: never in job data,
// progress, the outcome, a log line or a channel.

type SentProgress = { sentFile: string; clusterName: string };

/** `kubeconfig-prod.yaml`: the cluster name made safe for a file name. */
export function kubeconfigFileName(cluster: string): string {
  const safe = cluster
    .replace(/[^A-Za-z0-9._-]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 80);
  return `kubeconfig-${safe || 'cluster'}.yaml`;
}

export async function sendKubeconfig(run: JobRun, command: CommandOf<'k8s.kubeconfig'>): Promise<Outcome> {
  const { cloud, slack } = run.deps;
  const done = run.progress<SentProgress>();
  if (done.sentFile) return sentOutcome(done.clusterName ?? command.cluster, done.sentFile);
  const cluster = await resolveRef(
    command.cluster,
    'Kubernetes cluster',
    () => cloud.listK8sClusters(run.call),
    cloud.supports('getK8sCluster') ? (id) => cloud.getK8sCluster({ id }, run.call) : undefined,
  );
  const dm = await slack.conversations.open({ users: run.data.ctx.userId });
  const channel = dm.channel?.id;
  if (!channel) throw new Error('Slack opened no direct message channel');
  const fileName = kubeconfigFileName(cluster.name);
  const kubeconfig = await cloud.getKubeconfig({ clusterId: cluster.id }, run.call);
  await slack.files.uploadV2({
    channel_id: channel,
    file: Buffer.from(kubeconfig, 'utf8'),
    filename: fileName,
    title: `kubeconfig for ${cluster.name}`,
    initial_comment: `The kubeconfig of Kubernetes cluster *${escapeText(cluster.name)}*, as you asked. It grants access to the cluster: keep it to yourself (\`chmod 600 ${fileName}\`) and never paste it in a channel.`,
  });
  await run.saveProgress({ sentFile: fileName, clusterName: cluster.name });
  return sentOutcome(cluster.name, fileName);
}

function sentOutcome(cluster: string, fileName: string): Outcome {
  return {
    detail: `Sent you the kubeconfig of ${cluster} in a direct message, as the file ${fileName}. Use it with: KUBECONFIG=${fileName} kubectl get nodes`,
  };
}
