import { OPERATIONS, ROUTES, type Route, type RouteSource } from '../src/cloud/routes.js';
import { SHAPES, type Shape } from '../src/cloud/shape.js';

// Prints the per-shape operation tables of docs/cloud-api.md from src/cloud/routes.ts, so the doc
// cannot drift from the code (test/cloud/cloud-api-doc.test.ts checks the doc contains this output).
// Run: npx tsx scripts/gen-cloud-api-doc.ts

const LABEL: Record<(typeof OPERATIONS)[number], string> = {
  createProject: 'Create a project',
  listProjects: 'List all projects',
  getProject: 'Get a project',
  deleteProject: 'Delete a project',
  createInstance: 'Create a machine instance',
  listInstances: 'List all machine instances',
  getInstance: 'Get a machine instance',
  deleteInstance: 'Delete a machine instance',
  startInstance: 'Start a machine instance',
  stopInstance: 'Stop a machine instance',
  createFilesystem: 'Create a filesystem',
  listFilesystems: 'List all filesystems',
  getFilesystem: 'Get a filesystem',
  deleteFilesystem: 'Delete a filesystem',
  listK8sClusters: 'List all clusters (Kubernetes)',
  createK8sCluster: 'Create a Kubernetes cluster',
  registerK8sCluster: 'Register a Kubernetes cluster',
  getK8sCluster: 'Get a cluster (Kubernetes)',
  updateK8sCluster: 'Update a Kubernetes cluster',
  deleteK8sCluster: 'Delete a Kubernetes cluster',
  listK8sNodePools: 'List node pools (Kubernetes)',
  createK8sNodePool: 'Create a node pool (Kubernetes)',
  getK8sNodePool: 'Get a node pool (Kubernetes)',
  deleteK8sNodePool: 'Delete a node pool (Kubernetes)',
  getKubeconfig: 'Get kubeconfig credentials',
  listSlurmClusters: 'List all clusters (Slurm)',
  createSlurmCluster: 'Create a cluster (Slurm)',
  getSlurmCluster: 'Get a cluster (Slurm)',
  deleteSlurmCluster: 'Delete a cluster (Slurm)',
  listSlurmNodePools: 'List node pools (Slurm)',
  createSlurmNodePool: 'Create a node pool (Slurm)',
  getSlurmNodePool: 'Get a node pool (Slurm)',
  deleteSlurmNodePool: 'Delete a node pool (Slurm)',
  listSlurmUsers: 'List users on a Slurm cluster',
  addSlurmUser: 'Add a user to a Slurm cluster',
  getSlurmUser: 'Get a user on a Slurm cluster',
  updateSlurmUser: "Update a user's SSH keys",
  deleteSlurmUser: 'Delete a user from a Slurm cluster',
  listCapacity: 'List available capacity',
};

const DOC: Record<Shape, string> = {
  A: "infra v1alpha1 (B's route)",
  B: 'infra v1alpha1',
  C: 'Atlas 1.0.0',
};

function source(shape: Shape, s: RouteSource): string {
  if (s === 'reference') return DOC[shape];
  if (s === 'spec') return 'spec';
  return 'our choice';
}

function row(shape: Shape, op: (typeof OPERATIONS)[number], route: Route): string {
  const status =
    route.successSource === route.source
      ? `${route.success}`
      : `${route.success} (${source(shape, route.successSource)})`;
  return `| \`${op}\` | ${LABEL[op]} | ${route.method} | \`${route.path}\` | ${status} | ${route.projectHeader ? 'yes' : 'no'} | ${route.errors.join(', ')} | ${source(shape, route.source)} |`;
}

export function renderOperationTables(): string {
  const out: string[] = [];
  for (const shape of SHAPES) {
    const ops = OPERATIONS.filter((op) => ROUTES[shape][op] !== undefined);
    out.push(`### Shape ${shape} (${ops.length} operations)`, '');
    out.push('| Operation | What | Method | Path | Success | X-PROJECT-ID | Errors (spec) | Source |');
    out.push('|---|---|---|---|---|---|---|---|');
    for (const op of ops) out.push(row(shape, op, ROUTES[shape][op]!));
    out.push('');
  }
  return out.join('\n');
}

if (import.meta.url === `file://${process.argv[1]}`) process.stdout.write(renderOperationTables());
