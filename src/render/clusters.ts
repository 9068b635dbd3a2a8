import type { KnownBlock } from '@slack/types';
import type {
  KubernetesCluster,
  KubernetesNode,
  KubernetesNodePool,
  SlurmCluster,
  SlurmNode,
  SlurmNodePool,
  SlurmUser,
} from '../cloud/index.js';
import { clip, escapeText } from './job-message.js';

// Kubernetes and Slurm clusters, their node pools and Slurm users as people read them. Pure: the
// readiness rules live here too so the worker that waits and the message that shows agree.

/** How many pools a cluster's detail lists before pointing at `pools`. */
export const DETAIL_POOLS = 20;

export interface Readiness {
  readonly ready: number;
  readonly total: number;
}

/** A node is ready when the cloud says so, by state or by its Kubernetes Ready condition. */
export function k8sNodeReady(node: KubernetesNode): boolean {
  if (node.state.toLowerCase() === 'ready') return true;
  return node.conditions.some((c) => c.type === 'Ready' && c.status === 'True');
}

// Slurm states a node cannot take jobs in (sinfo's long names, any case, flags like `*` or `+` ignored).
const SLURM_NOT_UP = new Set([
  'down',
  'drain',
  'drained',
  'draining',
  'fail',
  'failing',
  'future',
  'maint',
  'not_responding',
  'no_respond',
  'unknown',
  'power_down',
  'powered_down',
  'powering_down',
  'powering_up',
  'reboot_issued',
  'reboot_requested',
]);

/** A Slurm node is up when it reports a state and none of them keeps it from taking jobs. */
export function slurmNodeUp(node: SlurmNode): boolean {
  if (node.states.length === 0) return false;
  return node.states.every((s) => !SLURM_NOT_UP.has(s.toLowerCase().replace(/[^a-z_]/g, '')));
}

/** Ready nodes of a pool, or undefined where the shape lists no nodes (C). */
export function k8sPoolReadiness(pool: KubernetesNodePool): Readiness | undefined {
  if (!pool.nodes) return undefined;
  return { ready: pool.nodes.filter(k8sNodeReady).length, total: pool.nodes.length };
}

export function slurmPoolReadiness(pool: SlurmNodePool): Readiness | undefined {
  if (!pool.nodes) return undefined;
  return { ready: pool.nodes.filter(slurmNodeUp).length, total: pool.nodes.length };
}

function sumReadiness(all: readonly (Readiness | undefined)[]): Readiness | undefined {
  const known = all.filter((r): r is Readiness => r !== undefined);
  if (known.length === 0) return undefined;
  return known.reduce((a, b) => ({ ready: a.ready + b.ready, total: a.total + b.total }));
}

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;

function readinessText(r: Readiness | undefined, word: 'ready' | 'up'): string {
  if (!r) return '';
  const icon = r.ready === r.total ? ':large_green_circle:' : ':hourglass_flowing_sand:';
  return `${icon} ${r.ready}/${r.total} ${word}`;
}

/** Cluster status where the shape reports one (A); undefined elsewhere. */
export function k8sStatus(c: KubernetesCluster): string | undefined {
  return c.status?.type;
}

function statusIcon(status: string | undefined): string {
  if (status === undefined) return ':wheel_of_dharma:';
  const s = status.toUpperCase();
  if (s === 'READY') return ':large_green_circle:';
  if (/ERROR|FAIL/.test(s)) return ':red_circle:';
  return ':hourglass_flowing_sand:';
}

const code = (text: string) => `\`${escapeText(text)}\``;

/** Lines packed into as few sections as fit Slack's 3,000 characters a text. */
function lineSections(lines: readonly string[]): KnownBlock[] {
  const blocks: KnownBlock[] = [];
  let chunk = '';
  for (const line of lines) {
    if (chunk && chunk.length + line.length + 1 > 2900) {
      blocks.push({ type: 'section', text: { type: 'mrkdwn', text: chunk } });
      chunk = '';
    }
    chunk += `${chunk ? '\n' : ''}${clip(line, 2900)}`;
  }
  if (chunk) blocks.push({ type: 'section', text: { type: 'mrkdwn', text: chunk } });
  return blocks;
}

function fieldsBlock(fields: readonly string[]): KnownBlock {
  return { type: 'section', fields: fields.slice(0, 10).map((text) => ({ type: 'mrkdwn' as const, text })) };
}

function poolsSection(title: string, lines: readonly string[], more: string): KnownBlock[] {
  if (lines.length === 0)
    return [{ type: 'section', text: { type: 'mrkdwn', text: `*${title}*\n_No node pools._` } }];
  const shown = lines.slice(0, DETAIL_POOLS);
  const rest = lines.length - shown.length;
  const blocks = lineSections([`*${title}*`, ...shown]);
  if (rest > 0)
    blocks.push({ type: 'context', elements: [{ type: 'mrkdwn', text: `…and ${rest} more: ${more}` }] });
  return blocks;
}

// ─── Kubernetes ──────────────────────────────────────────────────────────────────────────────────

export function k8sClusterLine(c: KubernetesCluster): string {
  const status = k8sStatus(c);
  return `${statusIcon(status)} *${escapeText(c.name)}* · ${escapeText(c.version)}${status ? ` · ${escapeText(status)}` : ''}`;
}

export function k8sPoolLine(p: KubernetesNodePool): string {
  const ready = readinessText(k8sPoolReadiness(p), 'ready');
  return `• *${escapeText(p.name)}* · ${p.count} × ${escapeText(p.type)} · ${escapeText(p.version)}${ready ? ` · ${ready}` : ''}`;
}

/** A cluster with its fields, labels and, when given, its node pools and node readiness. */
export function k8sClusterBlocks(c: KubernetesCluster, pools?: readonly KubernetesNodePool[]): KnownBlock[] {
  const status = k8sStatus(c);
  const fields = [`*Version*\n${escapeText(c.version)}`];
  if (status) fields.push(`*Status*\n${statusIcon(status)} ${escapeText(status)}`);
  if (c.endpoint) fields.push(`*Endpoint*\n${escapeText(c.endpoint)}`);
  if (pools) {
    fields.push(`*Node pools*\n${pools.length}`);
    const nodes = sumReadiness(pools.map(k8sPoolReadiness));
    if (nodes) fields.push(`*Nodes*\n${readinessText(nodes, 'ready')}`);
  }
  fields.push(`*Id*\n${code(c.id)}`);
  const blocks: KnownBlock[] = [
    { type: 'section', text: { type: 'mrkdwn', text: `:wheel_of_dharma: *${escapeText(c.name)}*` } },
    fieldsBlock(fields),
  ];
  const labels = Object.entries(c.labels ?? {});
  if (labels.length > 0) {
    const text = labels.map(([k, v]) => code(`${k}=${v}`)).join(' ');
    blocks.push({ type: 'context', elements: [{ type: 'mrkdwn', text: clip(`Labels: ${text}`, 2000) }] });
  }
  if (pools) {
    blocks.push(
      ...poolsSection('Node pools', pools.map(k8sPoolLine), `/gpu k8s pools ${escapeText(c.name)}`),
    );
  }
  return blocks;
}

// ─── Slurm ───────────────────────────────────────────────────────────────────────────────────────

function loginText(c: SlurmCluster): string {
  return (c.loginNodes ?? [])
    .map((n) => `${escapeText(n.name)}${n.publicIP ? ` (${escapeText(n.publicIP)})` : ''}`)
    .join(', ');
}

export function slurmClusterLine(c: SlurmCluster): string {
  const login = loginText(c);
  return `:desktop_computer: *${escapeText(c.name)}*${c.version ? ` · Slurm ${escapeText(c.version)}` : ''}${login ? ` · login ${login}` : ''}`;
}

export function slurmPoolLine(p: SlurmNodePool): string {
  const size = p.count !== undefined ? `${p.count} × ${escapeText(p.type)}` : escapeText(p.type);
  const up = readinessText(slurmPoolReadiness(p), 'up');
  return `• *${escapeText(p.name)}* · ${size}${up ? ` · ${up}` : ''}`;
}

export interface SlurmDetailOptions {
  /** The shape lists Slurm pools for the whole project, not per cluster (C). */
  readonly poolsOfProject?: boolean;
}

/** A Slurm cluster with its login nodes and, when given, its node pools. */
export function slurmClusterBlocks(
  c: SlurmCluster,
  pools?: readonly SlurmNodePool[],
  options: SlurmDetailOptions = {},
): KnownBlock[] {
  const fields: string[] = [];
  if (c.version) fields.push(`*Slurm*\n${escapeText(c.version)}`);
  const login = loginText(c);
  if (login) fields.push(`*Login*\n${login}`);
  if (pools) {
    fields.push(`*Node pools*\n${pools.length}`);
    const nodes = sumReadiness(pools.map(slurmPoolReadiness));
    if (nodes) fields.push(`*Nodes*\n${readinessText(nodes, 'up')}`);
  }
  fields.push(`*Id*\n${code(c.id)}`);
  const blocks: KnownBlock[] = [
    { type: 'section', text: { type: 'mrkdwn', text: `:desktop_computer: *${escapeText(c.name)}*` } },
    fieldsBlock(fields),
  ];
  const ip = c.loginNodes?.find((n) => n.publicIP)?.publicIP;
  if (ip) {
    blocks.push({
      type: 'context',
      elements: [{ type: 'mrkdwn', text: `Log in with \`ssh &lt;username&gt;@${escapeText(ip)}\`` }],
    });
  }
  if (pools) {
    const title = options.poolsOfProject ? 'Slurm node pools of this project' : 'Node pools';
    blocks.push(...poolsSection(title, pools.map(slurmPoolLine), `/gpu slurm pools ${escapeText(c.name)}`));
    if (options.poolsOfProject)
      blocks.push({ type: 'context', elements: [{ type: 'mrkdwn', text: POOLS_OF_PROJECT_NOTE }] });
  }
  return blocks;
}

/** Said wherever a shape's Slurm pool listing cannot be narrowed to one cluster. */
export const POOLS_OF_PROJECT_NOTE =
  'This cloud lists Slurm node pools for the whole project and does not say which cluster each belongs to.';

export function slurmUserLine(u: SlurmUser): string {
  return `• *${escapeText(u.username)}*${u.sudo ? ' · sudo' : ''} · ${plural(u.sshKeys.length, 'SSH key')}`;
}
