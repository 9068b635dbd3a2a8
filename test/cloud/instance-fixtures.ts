// The project and instance that the fake infrastructure APIs of test/cloud answer with.

export const PROJECT = '3f1c2a9e-8b7d-4c1e-9f2a-1b2c3d4e5f60';
export const INSTANCE_ID = '8a4b7c1d-0000-4000-8000-000000000001';

/** A running instance as the API answers it, with the fields a test cares about overridden. */
export function instanceBody(extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    id: INSTANCE_ID,
    name: 'train-1',
    type: 'h100-hgx-80gb.8x',
    ip: '10.0.0.5',
    state: 'running',
    image: 'ubuntu22.04',
    preemptible: false,
    ephemeral: false,
    userData: null,
    filesystems: [],
    tags: {},
    ...extra,
  };
}
