import type { Button, KnownBlock } from '@slack/types';
import { formatUsd } from '../../pricing/cost.js';
import { clip, escapeText } from '../../render/job-message.js';
import { keyAdvice, type LoginKeys } from '../../render/ssh-login.js';
import { humanDuration, slackDate } from '../approvals/render.js';
import { homeActionId, homeButtonValue } from './home-buttons.js';
import type { HomeMachine } from './home-data.js';

// "Your machines": one section and one row of buttons per machine, up to MACHINES_SHOWN; beyond that
// a count and `/gpu ls`, so the view stays within Slack's 100 blocks for any fleet.

export const MACHINES_SHOWN = 15;

const STATE_ORDER: Readonly<Record<string, number>> = { running: 0, starting: 1, stopping: 2, stopped: 3 };

/** Running first (they cost most), then by name. */
export function machineOrder(a: HomeMachine, b: HomeMachine): number {
  const rank = (m: HomeMachine) => STATE_ORDER[m.state ?? ''] ?? 4;
  return rank(a) - rank(b) || a.name.localeCompare(b.name);
}

function price(m: HomeMachine): string {
  if (!m.cost) return 'price not known yet';
  return m.cost.known ? `${formatUsd(m.cost.perHour)}/h running` : 'price unknown';
}

export function machineLine(m: HomeMachine, now: number): string {
  const state = m.state
    ? `*${escapeText(m.state)}*`
    : `_state unknown: gpuops could not read it from the cloud just now; \`/gpu show ${escapeText(m.name)}\` asks, \`/gpu watch on\` in its channel keeps it known_`;
  const parts = [
    `*${escapeText(m.name)}* · ${state}`,
    m.type ? `\`${escapeText(m.type)}\`` : undefined,
    m.regions && m.regions.length > 0 ? `offered in ${escapeText(m.regions.join(', '))}` : undefined,
    price(m),
    m.state === 'running' && m.runningSince !== undefined
      ? `up ${humanDuration((now - m.runningSince) / 1000)}`
      : undefined,
    m.leaseEndsAt !== undefined ? `lease ends ${slackDate(m.leaseEndsAt)}` : undefined,
    m.ssh !== undefined ? `\`${escapeText(m.ssh)}\`` : undefined,
    `made in <#${m.channelId}>`,
  ];
  return clip(parts.filter((p) => p !== undefined).join(' · '), 2900);
}

function button(label: string, run: 'start' | 'stop' | 'metrics', m: HomeMachine): Button {
  return {
    type: 'button',
    action_id: homeActionId(run),
    text: { type: 'plain_text', text: label },
    value: homeButtonValue({
      t: `${run} ${m.name}`,
      c: m.channelId,
      ...(m.projectId ? { p: m.projectId } : {}),
    }),
    ...(run === 'stop' ? { style: 'danger' as const } : run === 'start' ? { style: 'primary' as const } : {}),
  };
}

export function machinesSection(
  machines: readonly HomeMachine[],
  now: number,
  loginKeys?: LoginKeys,
): KnownBlock[] {
  const sorted = [...machines].sort(machineOrder);
  const running = sorted.filter((m) => m.state === 'running').length;
  const unknown = sorted.filter((m) => m.state === undefined).length;
  // Machines whose state gpuops does not know are not counted as not running.
  const counted =
    unknown === sorted.length
      ? 'state unknown'
      : unknown > 0
        ? `${running} running, ${unknown} in a state unknown`
        : `${running} running`;
  const blocks: KnownBlock[] = [
    {
      type: 'section',
      text: {
        type: 'mrkdwn',
        text:
          sorted.length === 0
            ? '*Your machines*\nNone made through gpuops yet. Create one with the button above or `/gpu create`.'
            : `*Your machines* · ${sorted.length} made through gpuops, ${counted}`,
      },
    },
  ];
  if (sorted.slice(0, MACHINES_SHOWN).some((m) => m.ssh !== undefined)) {
    blocks.push({
      type: 'context',
      elements: [
        {
          type: 'mrkdwn',
          text: clip(`:key: Log in with the \`ssh\` line of a running machine${keyAdvice(loginKeys)}`, 2900),
        },
      ],
    });
  }
  for (const m of sorted.slice(0, MACHINES_SHOWN)) {
    blocks.push({ type: 'section', text: { type: 'mrkdwn', text: machineLine(m, now) } });
    // A machine in a state gpuops does not know gets neither Start nor Stop: either may be wrong.
    const buttons = [
      ...(m.state !== undefined && m.state !== 'running' ? [button('Start', 'start', m)] : []),
      ...(m.state !== undefined && m.state !== 'stopped' ? [button('Stop', 'stop', m)] : []),
      button('Metrics', 'metrics', m),
    ];
    blocks.push({ type: 'actions', elements: buttons });
  }
  if (sorted.length > MACHINES_SHOWN) {
    blocks.push({
      type: 'context',
      elements: [
        {
          type: 'mrkdwn',
          text: `…and ${sorted.length - MACHINES_SHOWN} more (the first ${MACHINES_SHOWN} shown, running first): see them all with \`/gpu ls\`.`,
        },
      ],
    });
  }
  return blocks;
}
