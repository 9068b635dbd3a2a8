import type { KnownBlock } from '@slack/types';
import { stateIcon } from '../render/instances.js';
import { clip, escapeText } from '../render/job-message.js';
import { slackDate } from '../render/slack-date.js';
import type { WatchedKind, WatchedResource } from '../store/watch-snapshots.js';
import type { ResourceChange } from './diff-snapshot.js';

// What a watching channel reads: one message per resource, edited in place to show how it is now,
// and a reply in its thread for each change. Pure builders.

export const KIND_LABEL: Readonly<Record<WatchedKind, string>> = {
  instance: 'Instance',
  'k8s-cluster': 'Kubernetes cluster',
  'k8s-pool': 'Kubernetes node pool',
  'slurm-cluster': 'Slurm cluster',
  'slurm-pool': 'Slurm node pool',
};

const FIELD_LABEL: Readonly<Record<string, string>> = {
  state: 'state',
  status: 'status',
  ip: 'IP',
  count: 'nodes',
  version: 'version',
  type: 'type',
  name: 'name',
};

const shown = (value: string) => (value === '' ? 'none' : `\`${escapeText(value)}\``);

function nodeCounts(r: WatchedResource): string | undefined {
  if (!r.nodes) return undefined;
  const states = Object.values(r.nodes);
  const ready = states.filter((s) => s === 'ready' || s === 'idle' || s === 'alloc' || s === 'mix').length;
  return `${ready}/${states.length} nodes ready`;
}

function iconOf(r: WatchedResource, gone: boolean): string {
  if (gone) return ':wastebasket:';
  if (r.kind === 'instance') return stateIcon(r.fields.state ?? '');
  if (r.kind === 'k8s-cluster' || r.kind === 'k8s-pool') return ':ship:';
  return ':card_file_box:';
}

/** The one-line summary of how a resource is now (or was, when gone). */
export function resourceSummary(r: WatchedResource): string {
  const f = r.fields;
  switch (r.kind) {
    case 'instance':
      return [f.state, f.ip || undefined].filter(Boolean).map(String).map(escapeText).join(' · ');
    case 'k8s-cluster':
    case 'slurm-cluster':
      return [f.version, f.status].filter(Boolean).map(String).map(escapeText).join(' · ') || 'present';
    case 'k8s-pool':
    case 'slurm-pool': {
      const size = f.count !== undefined ? `${escapeText(f.count)} × ${escapeText(f.type ?? '?')}` : f.type;
      return [size, nodeCounts(r)].filter(Boolean).join(' · ');
    }
  }
}

export interface ResourceMessageInput {
  readonly resource: WatchedResource;
  readonly gone?: boolean;
  /** When the watcher saw the latest change (unix ms). */
  readonly at: number;
  readonly projectName?: string;
}

/** The message of one resource, edited in place at each change. */
export function resourceMessage(input: ResourceMessageInput): { text: string; blocks: KnownBlock[] } {
  const { resource: r, gone = false, at } = input;
  const status = gone ? `deleted (was ${resourceSummary(r) || 'present'})` : resourceSummary(r);
  const head = `${iconOf(r, gone)} *${escapeText(r.name)}* · ${status}`;
  const where = r.parent ? ` of ${escapeText(r.parent)}` : '';
  const type = r.kind === 'instance' && r.fields.type ? ` · ${escapeText(r.fields.type)}` : '';
  const context = [
    `${KIND_LABEL[r.kind]}${where}${type}`,
    `\`${escapeText(r.id.slice(0, 8))}\``,
    `${gone ? 'gone' : 'last change'} ${slackDate(at)}`,
    ...(input.projectName ? [`project ${escapeText(input.projectName)}`] : []),
  ].join(' · ');
  const text = `${KIND_LABEL[r.kind]} ${r.name}: ${gone ? 'deleted' : stripMarkup(resourceSummary(r))}`;
  return {
    text: clip(text, 3000),
    blocks: [
      { type: 'section', text: { type: 'mrkdwn', text: clip(head) } },
      { type: 'context', elements: [{ type: 'mrkdwn', text: clip(context, 2000) }] },
    ],
  };
}

function stripMarkup(text: string): string {
  return text.replaceAll('`', '');
}

function nodeLine(change: { node: string; from?: string; to?: string }): string {
  const node = `node \`${escapeText(change.node)}\``;
  if (change.from === undefined) return `${node} joined (${escapeText(change.to ?? '')})`;
  if (change.to === undefined) return `${node} left (was ${escapeText(change.from)})`;
  return `${node}: ${escapeText(change.from)} → ${escapeText(change.to)}`;
}

/** The thread reply for one change: what moved, from what to what. */
export function changeReply(change: ResourceChange): string {
  switch (change.type) {
    case 'appeared':
      return clip(`:sparkles: Appeared: ${resourceSummary(change.resource) || 'present'}.`);
    case 'gone':
      return clip(`:wastebasket: Deleted (last seen ${resourceSummary(change.resource) || 'present'}).`);
    case 'changed': {
      const lines = [
        ...change.fields.map(
          (f) => `${FIELD_LABEL[f.field] ?? escapeText(f.field)}: ${shown(f.from)} → ${shown(f.to)}`,
        ),
        ...change.nodes.map(nodeLine),
      ];
      return clip(lines.join('\n'));
    }
  }
}
