import type { HomeView, KnownBlock } from '@slack/types';
import { clip } from '../../render/job-message.js';
import { slackDate } from '../../render/slack-date.js';
import { openFormButton } from '../forms/open-form-button.js';
import { budgetsSection } from './budgets-section.js';
import type { HomeData } from './home-data.js';
import { approvalsSection, schedulesSection, waitlistSection } from './home-lists.js';
import { machinesSection } from './machines-section.js';
import { spendSection } from './spend-section.js';

// One person's Home tab from plain data. Every section caps what it lists, so the view stays within
// Slack's 100 blocks however many machines, approvals or entries there are (home-view.test.ts).

export const HOME_CALLBACK = 'gpuops.home';
export const MAX_HOME_BLOCKS = 100;

const divider: KnownBlock = { type: 'divider' };

export function homeView(data: HomeData): HomeView {
  const blocks: KnownBlock[] = [{ type: 'header', text: { type: 'plain_text', text: 'gpuops' } }];
  if (data.notice) {
    blocks.push({ type: 'section', text: { type: 'mrkdwn', text: clip(data.notice) } });
  }
  if (data.forms.length > 0) {
    blocks.push({
      type: 'actions',
      elements: data.forms.map((f) => openFormButton(f.label, { form: f.form }, { distinct: true })),
    });
  }
  blocks.push(divider, ...machinesSection(data.machines, data.now, data.loginKeys));
  if (data.approvals) blocks.push(divider, ...approvalsSection(data.approvals));
  blocks.push(divider, ...spendSection(data.spend));
  if (data.budgets && data.budgets.length > 0) blocks.push(...budgetsSection(data.budgets));
  blocks.push(divider, ...waitlistSection(data.waitlist));
  blocks.push(divider, ...schedulesSection(data.schedules));
  blocks.push({
    type: 'context',
    elements: [
      {
        type: 'mrkdwn',
        text: `Updated ${slackDate(data.now)}; it refreshes when your machines change.`,
      },
    ],
  });
  return { type: 'home', callback_id: HOME_CALLBACK, blocks: blocks.slice(0, MAX_HOME_BLOCKS) };
}
