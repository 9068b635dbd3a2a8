import { describe, expect, it } from 'vitest';
import type { KubernetesNodePool, SlurmNodePool } from '../../src/cloud/index.js';
import { checkBlocks } from '../../src/devkit/block-kit-limits.js';
import {
  k8sClusterBlocks,
  k8sClusterLine,
  k8sNodeReady,
  k8sPoolReadiness,
  slurmClusterBlocks,
  slurmNodeUp,
  slurmPoolReadiness,
} from '../../src/render/clusters.js';

const node = (state: string, ready: boolean) => ({
  name: 'n',
  instanceID: 'i',
  state,
  kubeletVersion: 'v1.31',
  createdAt: '2025-01-01T00:00:00Z',
  conditions: [{ type: 'Ready', status: ready ? 'True' : 'False' }],
});

const k8sPool = (name: string, states: [string, boolean][] | undefined): KubernetesNodePool => ({
  id: `id-${name}`,
  name,
  cluster: 'prod',
  type: 'h100-hgx-80gb.8x',
  count: states?.length ?? 2,
  version: 'v1.31',
  ...(states ? { nodes: states.map(([s, r]) => node(s, r)) } : {}),
});

describe('readiness', () => {
  it('counts a Kubernetes node ready by its state or its Ready condition', () => {
    expect(k8sNodeReady(node('ready', false))).toBe(true);
    expect(k8sNodeReady(node('provisioning', true))).toBe(true);
    expect(k8sNodeReady(node('provisioning', false))).toBe(false);
    expect(
      k8sPoolReadiness(
        k8sPool('a', [
          ['ready', true],
          ['provisioning', false],
        ]),
      ),
    ).toEqual({ ready: 1, total: 2 });
    expect(k8sPoolReadiness(k8sPool('c', undefined))).toBeUndefined();
  });

  it('counts a Slurm node up unless a state keeps it from taking jobs', () => {
    const slurm = (states: string[]) => ({ name: 'n', instanceID: 'i', states, slurmdVersion: '24' });
    expect(slurmNodeUp(slurm(['idle']))).toBe(true);
    expect(slurmNodeUp(slurm(['MIXED']))).toBe(true);
    expect(slurmNodeUp(slurm(['IDLE', 'DRAIN']))).toBe(false);
    expect(slurmNodeUp(slurm(['down*']))).toBe(false);
    expect(slurmNodeUp(slurm([]))).toBe(false);
    const pool: SlurmNodePool = {
      id: 'p',
      name: 'gpu',
      type: 't',
      count: 2,
      nodes: [slurm(['idle']), slurm(['down'])],
    };
    expect(slurmPoolReadiness(pool)).toEqual({ ready: 1, total: 2 });
  });
});

describe('cluster blocks', () => {
  it('shows status, nodes ready and labels of a cluster, within Slack limits however many pools', () => {
    const pools = Array.from({ length: 60 }, (_, i) =>
      k8sPool(`pool-${String(i).padStart(2, '0')}`, [
        ['ready', true],
        ['ready', true],
      ]),
    );
    const blocks = k8sClusterBlocks(
      { id: 'c1', name: 'prod', version: 'v1.31', status: { type: 'READY' }, labels: { team: 'ml' } },
      pools,
    );
    const text = JSON.stringify(blocks);
    expect(text).toContain('120/120 ready');
    expect(text).toContain('`team=ml`');
    expect(text).toContain('…and 40 more: /gpu k8s pools prod');
    expect(checkBlocks(blocks, 'message')).toEqual([]);
  });

  it('shows a provisioning cluster as such and a status-less one without a status', () => {
    expect(
      k8sClusterLine({ id: 'c', name: 'p', version: 'v1.31', status: { type: 'PROVISIONING' } }),
    ).toContain(':hourglass_flowing_sand: *p* · v1.31 · PROVISIONING');
    expect(k8sClusterLine({ id: 'c', name: 'p', version: 'v1.31' })).toBe(':wheel_of_dharma: *p* · v1.31');
  });

  it('escapes names and says when Slurm pools are the whole project’s', () => {
    const blocks = slurmClusterBlocks({ id: 's', name: 'a<b>' }, [{ id: 'p', name: 'gpu', type: 't' }], {
      poolsOfProject: true,
    });
    const text = JSON.stringify(blocks);
    expect(text).toContain('a&lt;b&gt;');
    expect(text).toContain('whole project');
    expect(checkBlocks(blocks, 'message')).toEqual([]);
  });
});
