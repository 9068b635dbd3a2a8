import { CloudForbiddenError, CloudNotFoundError } from '../../cloud/index.js';
import { UUID } from '../../cloud/rules.js';
import { escapeText } from '../../render/job-message.js';
import type { Handlers } from '../kit/handler.js';
import { PermanentJobError } from '../kit/job-errors.js';
import type { JobRun, Outcome } from '../kit/job-run.js';
import { pagedList } from '../kit/paged-list.js';
import { pickByRef } from '../kit/resolve.js';
import type { CommandOf } from '../registry.js';

export async function listProjects(run: JobRun): Promise<Outcome> {
  const projects = await run.deps.cloud.listProjects({ signal: run.signal });
  const current = run.data.ctx.projectId ?? run.deps.defaultProjectId;
  const lines = projects
    .sort((a, b) => a.name.localeCompare(b.name))
    .map((p) => `${p.id === current ? ':round_pushpin: ' : ''}*${escapeText(p.name)}* · \`${p.id}\``);
  const { text, blocks } = pagedList(run.data.command, `Projects (${projects.length})`, lines);
  return { detail: text, result: blocks };
}

/**
 * Binds the channel to a project. Names are looked up where the cloud lists projects (shape C); ids are
 * checked by listing the project's instances, so a typo or a project without access is refused.
 */
export async function useProject(run: JobRun, command: CommandOf<'project.use'>): Promise<Outcome> {
  const { cloud, store } = run.deps;
  let project: { id: string; name?: string };
  if (cloud.supports('listProjects')) {
    project = pickByRef(await cloud.listProjects({ signal: run.signal }), command.project, 'project');
  } else if (UUID.test(command.project)) {
    try {
      await cloud.listInstances({ projectId: command.project, signal: run.signal });
    } catch (err) {
      if (!(err instanceof CloudNotFoundError || err instanceof CloudForbiddenError)) throw err;
      throw new PermanentJobError(
        `No project with id ${command.project} that gpuops may use: check the id in the cloud's console, or ask whoever runs gpuops to give its account access to that project.`,
      );
    }
    project = { id: command.project };
  } else {
    throw new PermanentJobError(
      `This cloud cannot look projects up by name; give the project's id (a UUID), e.g. /gpu project use 3f1c2a9e-8b7d-4c1e-9f2a-1b2c3d4e5f60.`,
    );
  }
  await store.bindProject(run.data.ctx.channelId, {
    projectId: project.id,
    ...(project.name ? { name: project.name } : {}),
    boundBy: run.data.ctx.userId,
    boundAt: run.now(),
  });
  const label = project.name ? `${project.name} (${project.id})` : project.id;
  return { detail: `This channel now works in project ${label}.` };
}

export const handlers = {
  projects: listProjects,
  'project.use': useProject,
} satisfies Handlers;
