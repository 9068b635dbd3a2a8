import { describe, expect, it } from 'vitest';
import { ROUTES } from '../../../src/cloud/routes.js';
import { MAX_CONFIGURATIONS, typeChoices } from '../../../src/commands/forms/catalog-blocks.js';
import type { FormContext, FormValues } from '../../../src/commands/forms/form-kit.js';
import { readForm } from '../../../src/commands/read-form.js';
import { FORM_KINDS, type FormKind, formSpecOf } from '../../../src/commands/registry.js';
import { NAME_RULE } from '../../../src/commands/value-rules.js';
import { checkView } from '../../../src/devkit/block-kit-limits.js';
import type { Catalog } from '../../../src/store/catalog-cache.js';

const NOW = Date.UTC(2025, 0, 1, 12);
const PROJECT = '3f1c2a9e-8b7d-4c1e-9f2a-1b2c3d4e5f60';
const ED25519 = 'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIFuyvIwN8SVrspCLSMqeCCUbe1WBH+UgcwkB1g3duGfL ada@laptop';

function catalog(size: { configs?: number; types?: number; filesystems?: number } = {}): Catalog {
  return {
    v: 1,
    refreshedAt: NOW - 3 * 60_000,
    configurations: Array.from({ length: size.configs ?? 2 }, (_, i) => ({
      gpuType: `GPU_MODEL_${i}_80GB`,
      gpuCounts: [1, 2, 4, 8],
      pricePerGpuHour: '2.89',
      stoppedPricePerHour: '0.12',
      regions: ['ICELAND', 'NORWAY'],
      provisioningMinutes: 12,
    })),
    instanceTypes: Array.from({ length: size.types ?? 3 }, (_, i) => ({
      name: `gpu-type-with-a-rather-long-name-${i}.8x`,
      ...(i % 2 === 0 ? { capacity: i } : {}),
      inUse: i % 3,
      lastSeenAt: NOW - 1000,
    })),
    filesystems: Array.from({ length: size.filesystems ?? 2 }, (_, i) => ({
      id: `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`,
      name: `datasets-${i}`,
      size: '512Gi',
    })),
    problems: [],
  };
}

function ctx(form: FormKind, over: Partial<FormContext> = {}): FormContext {
  return {
    metadata: { v: 1, form, channelId: 'C0GPU', projectId: PROJECT, cluster: 'prod' },
    shape: 'C',
    routes: ROUTES.C,
    filesystems: 'pick',
    catalog: { catalog: catalog(), storedAt: NOW - 3 * 60_000 },
    ownedKeys: ['laptop'],
    now: NOW,
    ...over,
  };
}

/** view_submission state values: block id → the element's state, as Slack sends them. */
function values(fields: Record<string, string | string[] | undefined>): FormValues {
  const out: Record<string, Record<string, Record<string, unknown>>> = {};
  for (const [block, v] of Object.entries(fields)) {
    if (v === undefined) continue;
    out[block] = {
      value: Array.isArray(v)
        ? { type: 'multi_static_select', selected_options: v.map((value) => ({ value })) }
        : { type: 'plain_text_input', value: v },
    };
  }
  return out as unknown as FormValues;
}

describe('every form view', () => {
  it.each(FORM_KINDS)('%s stays within Slack limits, full and loading', (kind) => {
    const spec = formSpecOf(kind);
    const view = spec.view(ctx(kind));
    expect(checkView(view)).toEqual([]);
    expect(view.callback_id).toBe(`gpuops.form.${kind}`);
    expect(spec.title.length).toBeLessThanOrEqual(24);
    if (spec.needsCatalog) {
      const loading = spec.view(ctx(kind, { catalog: undefined }));
      expect(checkView(loading)).toEqual([]);
      expect(JSON.stringify(loading.blocks)).toContain('Loading configurations, prices and instance types');
      expect(loading.submit).toBeUndefined();
    } else {
      expect(view.submit).toBeDefined();
    }
  });

  it.each(['create', 'k8s.pool.add'] as const)('%s stays within limits with a huge catalogue', (kind) => {
    const big = { catalog: catalog({ configs: 80, types: 250, filesystems: 180 }), storedAt: NOW };
    const view = formSpecOf(kind).view(ctx(kind, { catalog: big }));
    expect(checkView(view)).toEqual([]);
    const text = JSON.stringify(view.blocks);
    expect(text).toContain('type_other');
    expect(text).toContain('150 more types are known than the list can show');
    if (kind === 'create') {
      expect(text).toContain(`…and ${80 - MAX_CONFIGURATIONS} more`);
      expect(text).toContain('filesystems_other');
    }
  });
});

describe('the create-instance form', () => {
  const spec = formSpecOf('create');

  it('shows prices per GPU-hour, regions and the provisioning estimate, and how old they are', () => {
    const text = JSON.stringify(spec.view(ctx('create')).blocks);
    expect(text).toContain('*GPU_MODEL_0_80GB* — $2.89 per GPU-hour ($0.12/h stopped)');
    expect(text).toContain('ICELAND, NORWAY · ready in ~12 min');
    expect(text).toContain('Catalogue as of 3 min ago');
    expect(text).toContain('Available now');
  });

  it('offers filesystems as a pick list, as ids, or not at all, by shape', () => {
    const pick = JSON.stringify(spec.view(ctx('create')).blocks);
    expect(pick).toContain('multi_static_select');
    expect(pick).toContain('datasets-1 · 512Gi');
    const ids = JSON.stringify(spec.view(ctx('create', { filesystems: 'ids', shape: 'B' })).blocks);
    expect(ids).toContain('Filesystem ids, one a line');
    const none = JSON.stringify(spec.view(ctx('create', { filesystems: 'none', shape: 'A' })).blocks);
    expect(none).not.toContain('"filesystems"');
  });

  it('asks for a typed instance type when the catalogue knows none', () => {
    const empty = { catalog: { ...catalog(), instanceTypes: [] }, storedAt: NOW };
    const view = spec.view(ctx('create', { catalog: empty }));
    const typeBlock = view.blocks.find((b) => b.block_id === 'type') as { element: { type: string } };
    expect(typeBlock.element.type).toBe('plain_text_input');
  });

  it('turns good fields into the command the typed form gives, with user data only as a secret', () => {
    const read = readForm(
      'create',
      values({
        name: 'train-01',
        type_other: 'h100-hgx-80gb.1x',
        image: 'ubuntu22.04',
        options: ['preemptible'],
        filesystems: ['00000000-0000-4000-8000-000000000001'],
        tags: 'team=ml\n\nowner=ada',
        user_data: '#cloud-config\nruncmd: [echo hi]\n',
      }),
      ctx('create'),
    );
    expect(read).toEqual({
      ok: true,
      command: {
        kind: 'create',
        modal: false,
        name: 'train-01',
        type: 'h100-hgx-80gb.1x',
        image: 'image://ubuntu22.04',
        preemptible: true,
        ephemeral: false,
        filesystems: ['00000000-0000-4000-8000-000000000001'],
        tags: { team: 'ml', owner: 'ada' },
      },
      secrets: { userData: Buffer.from('#cloud-config\nruncmd: [echo hi]').toString('base64') },
    });
  });

  it('puts every bad field on its own block, in words', () => {
    const read = readForm(
      'create',
      values({ name: '-bad name', image: 'no spaces allowed', tags: 'team=ml\n-x=1' }),
      ctx('create'),
    );
    expect(read.ok).toBe(false);
    if (read.ok) return;
    expect(read.errors.name).toBe(`${NAME_RULE}.`);
    expect(read.errors.type).toBe('Pick an instance type, or type one in the field below.');
    expect(read.errors.image).toMatch(/image reference looks like image:\/\/ubuntu22.04/);
    expect(read.errors.tags).toMatch(/^Line 2: a tag key has 1 to 63 characters/);
  });

  it('says on the filesystems field when a shape needs ids rather than names', () => {
    const read = readForm(
      'create',
      values({ name: 'a', type_other: 'cpu.16x', filesystems: 'datasets' }),
      ctx('create', { shape: 'B', routes: ROUTES.B, filesystems: 'ids' }),
    );
    expect(read).toMatchObject({
      ok: false,
      errors: { filesystems: expect.stringContaining('Give filesystem ids') },
    });
  });
});

describe('the other forms', () => {
  it('checks the SSH key format and keeps the normalised key', () => {
    const bad = readForm('keys.add', values({ name: 'laptop', public_key: 'ssh-foo AAAA' }), ctx('keys.add'));
    expect(bad).toMatchObject({
      ok: false,
      errors: { public_key: expect.stringMatching(/^That public key is not valid: key type "ssh-foo"/) },
    });
    const good = readForm(
      'keys.add',
      values({ name: 'laptop', public_key: `  ${ED25519}\n` }),
      ctx('keys.add'),
    );
    expect(good).toMatchObject({
      ok: true,
      command: { kind: 'keys.add', modal: false, name: 'laptop', publicKey: ED25519 },
    });
  });

  it('checks the Kubernetes version pattern', () => {
    const read = readForm('k8s.create', values({ name: 'prod', version: '1.31' }), ctx('k8s.create'));
    expect(read).toMatchObject({
      ok: false,
      errors: { version: expect.stringContaining('v1.31 or v1.31.2') },
    });
  });

  it('joins a kubeconfig pasted in parts, keeps it out of the command, and checks labels', () => {
    const kubeconfig =
      'apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster:\n    server: https://k\nusers: []';
    // Split at a line break, as the form asks.
    const at = kubeconfig.indexOf('\n- name');
    const [head, tail] = [kubeconfig.slice(0, at), kubeconfig.slice(at + 1)];
    const read = readForm(
      'k8s.register',
      values({
        name: 'on-prem',
        kubeconfig: head,
        kubeconfig_2: tail,
        labels: 'service.io/metrics-enabled=true',
      }),
      ctx('k8s.register', { shape: 'A', routes: ROUTES.A }),
    );
    expect(read).toEqual({
      ok: true,
      command: {
        kind: 'k8s.register',
        modal: false,
        name: 'on-prem',
        labels: { 'service.io/metrics-enabled': 'true' },
      },
      secrets: { kubeconfig: `${kubeconfig}\n` },
    });
    const bad = readForm(
      'k8s.register',
      values({ name: 'x', kubeconfig: 'just: text', labels: 'Bad Key=1' }),
      ctx('k8s.register', { shape: 'A', routes: ROUTES.A }),
    );
    expect(bad).toMatchObject({
      ok: false,
      errors: {
        kubeconfig: expect.stringContaining('names no cluster'),
        labels: expect.stringMatching(/^Line 1: a label key/),
      },
    });
  });

  it('says in shape B that registering a cluster is not available there', () => {
    const kubeconfig = 'clusters:\n- name: c\n';
    const read = readForm(
      'k8s.register',
      values({ name: 'x', kubeconfig }),
      ctx('k8s.register', { shape: 'B', routes: ROUTES.B }),
    );
    expect(read).toMatchObject({
      ok: false,
      errors: { name: expect.stringContaining('does not work with this cloud') },
    });
  });

  it('reads a node pool with its cluster from the metadata and checks the count', () => {
    const inA = readForm(
      'slurm.pool.add',
      values({ name: 'compute', type: 'cpu.16x', count: '4' }),
      ctx('slurm.pool.add', { shape: 'A', routes: ROUTES.A }),
    );
    expect(inA).toMatchObject({
      ok: false,
      errors: { name: expect.stringContaining('does not work with this cloud') },
    });
    const b = readForm(
      'slurm.pool.add',
      values({ name: 'compute', type: 'cpu.16x', count: '4' }),
      ctx('slurm.pool.add', { shape: 'B', routes: ROUTES.B }),
    );
    expect(b).toMatchObject({
      ok: true,
      command: {
        kind: 'slurm.pool.add',
        modal: false,
        cluster: 'prod',
        name: 'compute',
        type: 'cpu.16x',
        count: 4,
      },
    });
    const bad = readForm(
      'k8s.pool.add',
      values({ name: 'gpu', type: 'cpu.16x', count: '0' }),
      ctx('k8s.pool.add'),
    );
    expect(bad).toMatchObject({ ok: false, errors: { count: 'a count is a whole number from 1 to 1000.' } });
  });

  it('prefills the Slurm user form and checks the username', () => {
    const meta = {
      v: 1 as const,
      form: 'slurm.adduser' as const,
      channelId: 'C1',
      cluster: 'hpc',
      username: 'ada',
      sudo: true,
    };
    const view = formSpecOf('slurm.adduser').view(
      ctx('slurm.adduser', { metadata: meta, shape: 'A', routes: ROUTES.A }),
    );
    const text = JSON.stringify(view.blocks);
    expect(text).toContain('"initial_value":"ada"');
    expect(text).toContain('initial_options');
    expect(text).toContain('You join with your SSH keys: `laptop`');
    const noKeys = JSON.stringify(
      formSpecOf('slurm.adduser').view(ctx('slurm.adduser', { ownedKeys: [] })).blocks,
    );
    expect(noKeys).toContain('add yours with `/gpu keys add` first');
    const bad = readForm(
      'slurm.adduser',
      values({ username: 'Ada' }),
      ctx('slurm.adduser', { metadata: meta, shape: 'A', routes: ROUTES.A }),
    );
    expect(bad).toMatchObject({
      ok: false,
      errors: { username: expect.stringContaining('starts with a lowercase letter') },
    });
    const good = readForm(
      'slurm.adduser',
      {
        username: { value: { type: 'plain_text_input', value: 'ada' } },
        sudo: { value: { type: 'checkboxes', selected_options: [{ value: 'sudo' }] } },
      },
      ctx('slurm.adduser', { metadata: meta, shape: 'A', routes: ROUTES.A }),
    );
    expect(good).toMatchObject({
      ok: true,
      command: { kind: 'slurm.adduser', cluster: 'hpc', sudo: true, username: 'ada' },
    });
  });
});

describe('the create form where the cloud lists no capacity (shapes A and B)', () => {
  it('offers the types the price list names, with their price, instead of asking to type one', () => {
    const offered: Catalog = {
      ...catalog({ types: 0 }),
      instanceTypes: [
        { name: 'h100-hgx-80gb.8x', offered: true, inUse: 0, lastSeenAt: NOW - 1000 },
        { name: 'l40s-48gb.2x', offered: false, inUse: 0, lastSeenAt: NOW - 1000 },
      ],
      configurations: [
        {
          gpuType: 'H100_SXM5_80GB',
          gpuCounts: [8],
          pricePerGpuHour: '2.89',
          stoppedPricePerHour: '0.12',
          regions: ['ICELAND'],
          provisioningMinutes: 12,
        },
      ],
    };
    const [available, , seen] = typeChoices(offered, NOW);
    expect(available!.choices).toEqual([
      { text: 'h100-hgx-80gb.8x · offered · $23.12/h', value: 'h100-hgx-80gb.8x' },
    ]);
    expect(seen!.choices.map((c) => c.value)).toEqual(['l40s-48gb.2x']);
  });
});
