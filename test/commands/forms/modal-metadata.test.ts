import { describe, expect, it } from 'vitest';
import {
  callbackIdOf,
  decodeModalMetadata,
  encodeModalMetadata,
  FormMetadataError,
  type ModalMetadata,
} from '../../../src/commands/forms/modal-metadata.js';

const full: ModalMetadata = {
  v: 1,
  form: 'slurm.adduser',
  channelId: 'C0GPU',
  projectId: '3f1c2a9e-8b7d-4c1e-9f2a-1b2c3d4e5f60',
  responseUrl: 'https://hooks.slack.com/commands/T0/1/abc',
  cluster: 'hpc',
  username: 'ada',
  sudo: true,
};

describe('form metadata in private_metadata', () => {
  it('comes back exactly as it went in', () => {
    expect(decodeModalMetadata(encodeModalMetadata(full))).toEqual(full);
    const minimal: ModalMetadata = { v: 1, form: 'create', channelId: 'C1' };
    expect(decodeModalMetadata(encodeModalMetadata(minimal))).toEqual(minimal);
  });

  it('fits in the 3,000 characters Slack keeps, with room to spare', () => {
    expect(encodeModalMetadata(full).length).toBeLessThan(600);
  });

  it('refuses metadata of another version or none, with a sentence saying what to do', () => {
    for (const bad of ['', 'not json', '{"v":2,"form":"create","channelId":"C1"}', '{"v":1,"form":"nope"}']) {
      expect(() => decodeModalMetadata(bad)).toThrowError(FormMetadataError);
    }
    expect(() => decodeModalMetadata(undefined)).toThrowError(/open it again/);
  });

  it('names every form with a callback id under one prefix', () => {
    expect(callbackIdOf('k8s.pool.add')).toBe('gpuops.form.k8s.pool.add');
  });
});
