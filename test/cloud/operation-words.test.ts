import { describe, expect, it } from 'vitest';
import { CloudApiError, CloudUnsupportedError } from '../../src/cloud/index.js';
import { inWords, operationInWords } from '../../src/cloud/operation-words.js';
import { classifyFailure } from '../../src/commands/kit/job-errors.js';

// People never read an operation id: cloud failures shown in Slack say what was tried in words.

describe('operations in words', () => {
  it('names what the cloud was asked to do', () => {
    expect(operationInWords('deleteFilesystem')).toBe('delete filesystems');
    expect(operationInWords('listK8sClusters')).toBe('list Kubernetes clusters');
    expect(operationInWords('addSlurmUser')).toBe('add Slurm users');
    expect(inWords('listSshKeys failed with HTTP 401: Invalid API key — the key was refused.')).toBe(
      'List SSH keys: failed with HTTP 401: Invalid API key — the key was refused.',
    );
    expect(inWords('Something else happened.')).toBe('Something else happened.');
  });

  it('keeps operation ids out of what a failed job tells its requester', () => {
    const api = new CloudApiError({ operation: 'listInstances', status: 500, serverMessage: 'boom' });
    expect(classifyFailure(api).message).toMatch(/^List instances: failed with HTTP 500: boom — /);
    expect(classifyFailure(new CloudUnsupportedError('deleteFilesystem', 'B')).message).toBe(
      "This cloud's API cannot delete filesystems. Use the cloud's own console or CLI for it; `/gpu help` lists what works here.",
    );
  });
});
