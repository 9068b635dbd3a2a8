import { describe, expect, it } from 'vitest';
import { type ParseError, parseCommand } from '../../src/commands/parse-command.js';
import {
  docFor,
  GPU_COMMAND_KINDS,
  type GpuCommand,
  gpuCommandSchema,
  SPECS_IN_HELP_ORDER,
} from '../../src/commands/registry.js';
import { unescapeSlackText } from '../../src/commands/slack-text.js';

const KEY = 'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIFuyvIwN8SVrspCLSMqeCCUbe1WBH+UgcwkB1g3duGfL';
const UUID = '3f1c2a9e-8b7d-4c1e-9f2a-1b2c3d4e5f60';

function ok(text: string): GpuCommand {
  const result = parseCommand(text);
  if (!result.ok) throw new Error(`expected "${text}" to parse, got: ${result.error.message}`);
  return result.command;
}

function err(text: string): ParseError {
  const result = parseCommand(text);
  if (result.ok) throw new Error(`expected "${text}" to fail, got ${JSON.stringify(result.command)}`);
  return result.error;
}

// One line per subcommand form of the grammar in docs/commands.md, with the command it must become.
const GRAMMAR: ReadonlyArray<readonly [string, GpuCommand]> = [
  ['help', { kind: 'help' }],
  ['help k8s', { kind: 'help', topic: 'k8s' }],
  ['help k8s pool add', { kind: 'help', topic: 'k8s pool add' }],
  ['projects', { kind: 'projects' }],
  ['project', { kind: 'project' }],
  ['project use research', { kind: 'project.use', project: 'research' }],
  [`project use ${UUID}`, { kind: 'project.use', project: UUID }],
  ['ls', { kind: 'ls' }],
  ['show train-01', { kind: 'show', instance: 'train-01' }],
  ['create', { kind: 'create', modal: true }],
  [
    'create train-01 h100-hgx-80gb.1x',
    {
      kind: 'create',
      modal: false,
      name: 'train-01',
      type: 'h100-hgx-80gb.1x',
      preemptible: false,
      ephemeral: false,
      filesystems: [],
      tags: {},
    },
  ],
  [
    'create train-01 h100-hgx-80gb.1x --image ubuntu22.04 --preemptible --ephemeral --fs data --fs scratch --tag team=vision --tag cost=42',
    {
      kind: 'create',
      modal: false,
      name: 'train-01',
      type: 'h100-hgx-80gb.1x',
      image: 'image://ubuntu22.04',
      preemptible: true,
      ephemeral: true,
      filesystems: ['data', 'scratch'],
      tags: { team: 'vision', cost: '42' },
    },
  ],
  ['start train-01', { kind: 'start', instance: 'train-01' }],
  ['stop train-01', { kind: 'stop', instance: 'train-01' }],
  ['rm train-01', { kind: 'rm', instance: 'train-01' }],
  ['capacity', { kind: 'capacity' }],
  ['configs', { kind: 'configs' }],
  ['keys', { kind: 'keys' }],
  ['keys add', { kind: 'keys.add', modal: true }],
  [
    `keys add laptop ${KEY} ada@laptop`,
    { kind: 'keys.add', modal: false, name: 'laptop', publicKey: `${KEY} ada@laptop` },
  ],
  ['keys rm laptop', { kind: 'keys.rm', name: 'laptop' }],
  ['fs', { kind: 'fs' }],
  ['fs create datasets 512Gi', { kind: 'fs.create', name: 'datasets', size: '512Gi' }],
  ['fs show datasets', { kind: 'fs.show', name: 'datasets' }],
  ['fs rm datasets', { kind: 'fs.rm', name: 'datasets' }],
  ['k8s ls', { kind: 'k8s.ls' }],
  ['k8s show prod', { kind: 'k8s.show', cluster: 'prod' }],
  ['k8s create', { kind: 'k8s.create', modal: true }],
  ['k8s create prod v1.31', { kind: 'k8s.create', modal: false, name: 'prod', version: 'v1.31' }],
  ['k8s register', { kind: 'k8s.register', modal: true }],
  ['k8s rm prod', { kind: 'k8s.rm', cluster: 'prod' }],
  ['k8s upgrade prod v1.32.1', { kind: 'k8s.upgrade', cluster: 'prod', version: 'v1.32.1' }],
  [
    'k8s label prod service.io/metrics-enabled=true team=ml',
    { kind: 'k8s.label', cluster: 'prod', labels: { 'service.io/metrics-enabled': 'true', team: 'ml' } },
  ],
  ['k8s pools prod', { kind: 'k8s.pools', cluster: 'prod' }],
  ['k8s pool add prod', { kind: 'k8s.pool.add', modal: true, cluster: 'prod' }],
  [
    'k8s pool add prod gpu-a h100-hgx-80gb.8x 2',
    {
      kind: 'k8s.pool.add',
      modal: false,
      cluster: 'prod',
      name: 'gpu-a',
      type: 'h100-hgx-80gb.8x',
      count: 2,
    },
  ],
  ['k8s pool rm prod gpu-a', { kind: 'k8s.pool.rm', cluster: 'prod', pool: 'gpu-a' }],
  ['k8s kubeconfig prod', { kind: 'k8s.kubeconfig', cluster: 'prod' }],
  ['slurm ls', { kind: 'slurm.ls' }],
  ['slurm show hpc', { kind: 'slurm.show', cluster: 'hpc' }],
  ['slurm create', { kind: 'slurm.create', modal: true }],
  ['slurm create hpc', { kind: 'slurm.create', modal: false, name: 'hpc' }],
  ['slurm rm hpc', { kind: 'slurm.rm', cluster: 'hpc' }],
  ['slurm pools hpc', { kind: 'slurm.pools', cluster: 'hpc' }],
  ['slurm pool add hpc', { kind: 'slurm.pool.add', modal: true, cluster: 'hpc' }],
  [
    'slurm pool add hpc compute a100-sxm4-80gb.4x 4',
    {
      kind: 'slurm.pool.add',
      modal: false,
      cluster: 'hpc',
      name: 'compute',
      type: 'a100-sxm4-80gb.4x',
      count: 4,
    },
  ],
  ['slurm pool rm hpc compute', { kind: 'slurm.pool.rm', cluster: 'hpc', pool: 'compute' }],
  ['slurm users hpc', { kind: 'slurm.users', cluster: 'hpc' }],
  ['slurm adduser hpc', { kind: 'slurm.adduser', cluster: 'hpc', sudo: false }],
  [
    'slurm adduser hpc --sudo --username ada',
    { kind: 'slurm.adduser', cluster: 'hpc', sudo: true, username: 'ada' },
  ],
  [
    'slurm adduser hpc --form --username ada',
    { kind: 'slurm.adduser', cluster: 'hpc', sudo: false, username: 'ada', modal: true },
  ],
  ['slurm rmuser hpc ada', { kind: 'slurm.rmuser', cluster: 'hpc', user: 'ada' }],
  ['slurm sudo hpc ada on', { kind: 'slurm.sudo', cluster: 'hpc', user: 'ada', sudo: true }],
  ['slurm sudo hpc ada off', { kind: 'slurm.sudo', cluster: 'hpc', user: 'ada', sudo: false }],
  ['metrics train-01', { kind: 'metrics', instance: 'train-01', rangeSeconds: 3600 }],
  ['metrics train-01 --range 6h', { kind: 'metrics', instance: 'train-01', rangeSeconds: 21_600 }],
  [
    'metrics query avg(DCGM_FI_DEV_GPU_UTIL)',
    { kind: 'metrics.query', promql: 'avg(DCGM_FI_DEV_GPU_UTIL)', rangeSeconds: 3600 },
  ],
  [
    'metrics query avg by (gpu) (DCGM_FI_DEV_GPU_UTIL) --range 1d',
    { kind: 'metrics.query', promql: 'avg by (gpu) (DCGM_FI_DEV_GPU_UTIL)', rangeSeconds: 86_400 },
  ],
  [
    'schedule stop train-01 weekdays 20:00',
    { kind: 'schedule.stop', instance: 'train-01', when: 'weekdays 20:00', pattern: '0 20 * * 1-5' },
  ],
  [
    'schedule start team=ml daily 7:30 --tz Europe/Berlin',
    {
      kind: 'schedule.start',
      tag: { key: 'team', value: 'ml' },
      when: 'daily 07:30',
      pattern: '30 7 * * *',
      tz: 'Europe/Berlin',
    },
  ],
  [
    'schedule stop train-01 0 22 * * 1-5',
    { kind: 'schedule.stop', instance: 'train-01', when: '0 22 * * 1-5', pattern: '0 22 * * 1-5' },
  ],
  ['schedules', { kind: 'schedules' }],
  ['schedule rm s-3f9a2c', { kind: 'schedule.rm', id: 's-3f9a2c' }],
  ['spend', { kind: 'spend', period: 'this month' }],
  ['spend last month', { kind: 'spend', period: 'last month' }],
  ['spend research this week', { kind: 'spend', filter: 'research', period: 'this week' }],
  ['spend @U0ADA last month', { kind: 'spend', filter: '@U0ADA', period: 'last month' }],
  ['spend h100-hgx-80gb.1x', { kind: 'spend', filter: 'h100-hgx-80gb.1x', period: 'this month' }],
  ['budget', { kind: 'budget' }],
  ['watch', { kind: 'watch' }],
  ['watch on', { kind: 'watch', state: 'on' }],
  ['watch off', { kind: 'watch', state: 'off' }],
  ['jobs', { kind: 'jobs' }],
  ['approvals', { kind: 'approvals' }],
  ['waitlist', { kind: 'waitlist' }],
  ['waitlist h100-hgx-80gb.8x', { kind: 'waitlist.add', type: 'h100-hgx-80gb.8x', count: 1 }],
  ['waitlist h100-hgx-80gb.8x 2', { kind: 'waitlist.add', type: 'h100-hgx-80gb.8x', count: 2 }],
  ['waitlist rm w-3f9a', { kind: 'waitlist.rm', id: 'w-3f9a' }],
  ['audit', { kind: 'audit', limit: 20 }],
  ['audit 50', { kind: 'audit', limit: 50 }],
];

describe('parseCommand: the grammar', () => {
  it.each(GRAMMAR)('/gpu %s', (text, expected) => {
    const command = ok(text);
    expect(command).toEqual(expected);
    // Downstream (job payloads) re-validates with the schema: the parsed command must pass unchanged.
    expect(gpuCommandSchema.parse(command)).toEqual(command);
  });

  it('covers every subcommand kind', () => {
    const covered = new Set(GRAMMAR.map(([, command]) => command.kind));
    expect([...GPU_COMMAND_KINDS].filter((kind) => !covered.has(kind))).toEqual([]);
  });

  it.each(SPECS_IN_HELP_ORDER.map((doc) => [doc.example, doc.kind] as const))(
    'the example people are shown works: %s',
    (example, kind) => {
      expect(ok(example.replace(/^\/gpu /, '')).kind).toBe(kind);
    },
  );

  it('has a usage line, summary and example for every kind', () => {
    for (const kind of GPU_COMMAND_KINDS) {
      const doc = docFor(kind);
      expect(doc.usage.startsWith('/gpu ')).toBe(true);
      expect(doc.example.startsWith('/gpu ')).toBe(true);
      expect(doc.summary.length).toBeGreaterThan(5);
    }
  });

  it('treats empty text and a repeated /gpu as help or the command', () => {
    expect(ok('')).toEqual({ kind: 'help' });
    expect(ok('   \n ')).toEqual({ kind: 'help' });
    expect(ok('/gpu ls')).toEqual({ kind: 'ls' });
    expect(ok('--help')).toEqual({ kind: 'help' });
  });
});

describe('parseCommand: words, quotes and Slack escapes', () => {
  it('reads subcommand words in any case and keeps the case of names', () => {
    expect(ok('LS')).toEqual({ kind: 'ls' });
    expect(ok('K8s Pool ADD Prod GPU-a t 3')).toMatchObject({
      kind: 'k8s.pool.add',
      cluster: 'Prod',
      name: 'GPU-a',
    });
    expect(ok('slurm sudo hpc ada OFF')).toMatchObject({ sudo: false });
    expect(ok('watch On')).toEqual({ kind: 'watch', state: 'on' });
  });

  it('ignores leading, trailing and repeated whitespace, tabs and non-breaking spaces', () => {
    expect(ok('   start \t train-01   ')).toEqual({ kind: 'start', instance: 'train-01' });
    expect(ok('start\u00a0train-01')).toEqual({ kind: 'start', instance: 'train-01' });
  });

  it('groups quoted words, straight and smart', () => {
    const straight = ok('create a t --tag "note=hello world" --tag \'owner=ada lovelace\'');
    expect(straight).toMatchObject({ tags: { note: 'hello world', owner: 'ada lovelace' } });
    const smart = ok('create a t --tag “note=hello world” --tag ‘who=ada l’');
    expect(smart).toMatchObject({ tags: { note: 'hello world', who: 'ada l' } });
    // A quote in the middle of a word joins, as in a shell.
    expect(ok('create a t --tag note="two words"')).toMatchObject({ tags: { note: 'two words' } });
    expect(ok('show "train-01"')).toEqual({ kind: 'show', instance: 'train-01' });
  });

  it('accepts --flag=value and --flag value, and a dash that a client turned into an em dash', () => {
    expect(ok('metrics a --range=6h')).toMatchObject({ rangeSeconds: 21_600 });
    expect(ok('metrics a --range 6h')).toMatchObject({ rangeSeconds: 21_600 });
    expect(ok('metrics a —range 6h')).toMatchObject({ rangeSeconds: 21_600 });
    expect(ok('create a t --preemptible=false --ephemeral=yes')).toMatchObject({
      preemptible: false,
      ephemeral: true,
    });
    expect(ok('slurm adduser hpc --USERNAME=ada')).toMatchObject({ username: 'ada' });
  });

  it('takes a quoted "--x" as a value, not a flag', () => {
    expect(err('show "--range"').message).toContain('is not a valid instance name');
  });

  it('unwraps links, mailto and mentions Slack put around what was typed', () => {
    expect(ok('show <http://train.io|train.io>')).toEqual({ kind: 'show', instance: 'train.io' });
    expect(ok('fs create <http://data.io|data.io> 1Ti')).toEqual({
      kind: 'fs.create',
      name: 'data.io',
      size: '1Ti',
    });
    // A pasted URL has no label: the URL itself is what was typed.
    expect(err('show <https://box.example.com>').message).toContain(
      '"https://box.example.com" is not a valid',
    );
  });

  it('keeps an SSH key comment that Slack turned into a mailto link', () => {
    const command = ok(`keys add laptop ${KEY} <mailto:ada@example.com|ada@example.com>`);
    expect(command).toEqual({
      kind: 'keys.add',
      modal: false,
      name: 'laptop',
      publicKey: `${KEY} ada@example.com`,
    });
  });

  it('takes the whole key, quoted or not, with a comment that has quotes or spaces', () => {
    expect(ok(`keys add laptop "${KEY} ada"`)).toMatchObject({ publicKey: `${KEY} ada` });
    expect(ok(`keys add laptop ${KEY} Ada's   work  laptop`)).toMatchObject({
      publicKey: `${KEY} Ada's work laptop`,
    });
  });

  it('gives PromQL the raw rest of the line with entities decoded and smart quotes straightened', () => {
    const command = ok('metrics query sum(rate(gpu_util{host=“a b”}[5m])) &gt; 0.5 &amp;&amp; x --range 6h');
    expect(command).toEqual({
      kind: 'metrics.query',
      promql: 'sum(rate(gpu_util{host="a b"}[5m])) > 0.5 && x',
      rangeSeconds: 21_600,
    });
    expect(ok('metrics query --range=1d up')).toEqual({
      kind: 'metrics.query',
      promql: 'up',
      rangeSeconds: 86_400,
    });
    expect(ok('metrics query "up == 1"')).toMatchObject({ promql: 'up == 1' });
  });

  it('unwraps a mention into its user id', () => {
    expect(err('show <@U123ABC|ada>').message).toContain('"@U123ABC"');
  });
});

describe('parseCommand: value rules', () => {
  it.each([
    ['start', '`/gpu start` needs the instance name or id.'],
    ['show', '`/gpu show` needs the instance name or id.'],
    ['create train-01', '`/gpu create` needs the instance type after the name.'],
    ['create --preemptible', '`/gpu create` needs a name for the instance.'],
    ['fs create data', '`/gpu fs create` needs a size after the name, like 512Gi.'],
    ['k8s create prod', '`/gpu k8s create` needs a Kubernetes version such as v1.31.'],
    ['k8s pool add prod gpu-a t', '`/gpu k8s pool add` needs the number of nodes after the instance type.'],
    ['slurm sudo hpc ada', '`/gpu slurm sudo` needs on or off after the username.'],
    ['k8s label prod', '`/gpu k8s label` needs at least one label as key=value after the cluster.'],
    ['metrics query', '`/gpu metrics query` needs a PromQL expression.'],
    ['keys add laptop', '`/gpu keys add` needs the public key after the name (or no arguments, for a form).'],
  ])('/gpu %s → %s', (text, message) => {
    expect(err(text).message).toBe(message);
  });

  it('names what was wrong, why, the usage and an example', () => {
    const e = err('k8s pool add prod gpu-a h100 0');
    expect(e.message).toBe('"0" is not a valid node count: a node count is a whole number from 1 to 1000.');
    expect(e.usage).toBe('/gpu k8s pool add <cluster> [<name> <type> <count>]');
    expect(e.example).toBe('/gpu k8s pool add prod gpu-a h100-hgx-80gb.8x 2');
  });

  it.each([
    ['k8s pool add c p t 1001', 'from 1 to 1000'],
    ['slurm pool add c p t -1', 'from 1 to 1000'],
    ['slurm pool add c p t 2.5', 'from 1 to 1000'],
    ['waitlist h100 65', 'from 1 to 64'],
    ['waitlist h100 0', 'from 1 to 64'],
    ['audit 0', 'from 1 to 500'],
    ['audit 501', 'from 1 to 500'],
    ['audit ten', 'from 1 to 500'],
  ])('rejects the count in /gpu %s', (text, rule) => {
    expect(err(text).message).toContain(rule);
  });

  it('accepts counts at the bounds', () => {
    expect(ok('k8s pool add c p t 1000')).toMatchObject({ count: 1000 });
    expect(ok('waitlist t 64')).toMatchObject({ count: 64 });
    expect(ok('audit 1')).toEqual({ kind: 'audit', limit: 1 });
    expect(ok('audit 500')).toEqual({ kind: 'audit', limit: 500 });
  });

  it.each([
    ['15m', 900],
    ['1h', 3600],
    ['6h', 21_600],
    ['1d', 86_400],
    ['7d', 604_800],
    ['30d', 2_592_000],
    ['1h30m', 5400],
    ['2w', 1_209_600],
  ])('parses the range %s into %i seconds', (range, seconds) => {
    expect(ok(`metrics a --range ${range}`)).toMatchObject({ rangeSeconds: seconds });
  });

  it.each(['31d', '0m', '30s', '1y', 'h', '10', '-1h', '1.5h'])('rejects the range %s', (range) => {
    const e = err(`metrics a --range ${range}`);
    expect(e.message).toContain(`"${range}" is not a valid range`);
    expect(e.message).toContain('from 1m to 30d');
    expect(e.usage).toBe('/gpu metrics <instance> [--range 1h]');
  });

  it.each([
    ['show -box', 'starts with a letter or digit'],
    ['show a/b', 'letters, digits, . _ -'],
    [`show ${'a'.repeat(64)}`, '1 to 63 characters'],
    ['rm ""', 'is not a valid instance name'],
    ['keys rm my_key!', 'is not a valid name of the key'],
  ])('rejects the name in /gpu %s', (text, rule) => {
    expect(err(text).message).toContain(rule);
  });

  it('accepts a 63-character name', () => {
    expect(ok(`show ${'a'.repeat(63)}`)).toMatchObject({ instance: 'a'.repeat(63) });
  });

  it('checks sizes, versions, tags, labels, images, usernames and keys with the cloud rules', () => {
    expect(err('fs create data 512').message).toContain('a size is a whole number with a unit');
    expect(ok('fs create data 1Ti')).toMatchObject({ size: '1Ti' });
    expect(err('k8s upgrade prod latest').message).toContain('"latest" is not a valid version');
    expect(ok('k8s upgrade prod 1.32')).toMatchObject({ version: 'v1.32' });
    expect(err('create a t --tag -bad=1').message).toContain('a tag key has 1 to 63 characters');
    expect(err('create a t --tag novalue').message).toBe(
      '--tag needs key=value, such as team=ml, not "novalue".',
    );
    expect(err('create a t --tag a=1 --tag a=2').message).toContain('was given twice');
    expect(err('k8s label prod a=-x').message).toContain('a label value is empty or up to 63 characters');
    expect(err('k8s label prod Bad.Prefix/x=1').message).toContain('a label key is an optional DNS prefix');
    expect(ok('k8s label prod gone=')).toMatchObject({ labels: { gone: '' } });
    expect(ok('create a t --image image://debian12')).toMatchObject({ image: 'image://debian12' });
    expect(err('create a t --image "bad image"').message).toContain('is not a valid image');
    expect(err('slurm rmuser hpc Ada').message).toContain('a username starts with a lowercase letter');
    expect(err('keys add laptop ssh-ed25519 AAAA').message).toContain('That public key is not valid');
    expect(err('keys add laptop ssh-foo AAAAC3NzaC1lZDI1NTE5').message).toContain(
      'key type "ssh-foo" is not accepted',
    );
  });

  it('refuses flags a subcommand does not take, and flags without values', () => {
    expect(err('jobs --all').message).toBe('`/gpu jobs` takes no flags; leave out "--all".');
    expect(err('ls --all').message).toBe('`/gpu ls` has no flag "--all"; it takes --page.');
    expect(err('metrics a --range').message).toBe('--range needs a value after it.');
    expect(err('create a t --image --preemptible').message).toBe('--image needs a value after it.');
    expect(err('create a t --image a --image b').message).toBe('--image was given twice; give it once.');
    expect(err('create a t --preemptible=maybe').message).toContain('--preemptible is a switch');
  });

  it('refuses extra words', () => {
    expect(err('ls now').message).toBe('`/gpu ls` takes no arguments; leave out "now".');
    expect(err('start a b').message).toBe(
      '"b" is more than `/gpu start` takes; leave it out, or quote a value that has spaces.',
    );
    expect(err('k8s register prod').message).toContain('takes no arguments: it opens a form');
  });

  it('reports an unclosed quote with the usage of the subcommand being typed', () => {
    const e = err('create "train 01 t');
    expect(e.message).toContain('A quote was opened and never closed');
    expect(e.usage).toBe(docFor('create').usage);
  });
});

describe('parseCommand: suggestions', () => {
  it.each([
    ['strat train-01', 'Did you mean `/gpu start`?', '/gpu start <instance>'],
    ['lss', 'Did you mean `/gpu ls`?', '/gpu ls [--page N]'],
    ['capcity', 'Did you mean `/gpu capacity`?', '/gpu capacity [--page N]'],
    ['delete train-01', 'Did you mean `/gpu rm`?', '/gpu rm <instance>'],
    ['kubernetes ls', 'Did you mean `/gpu k8s`?', '/gpu k8s ls [--page N]'],
    ['k8s pols prod', 'Did you mean `/gpu k8s pools`?', '/gpu k8s pools <cluster> [--page N]'],
    [
      'k8s pool ad prod',
      'Did you mean `/gpu k8s pool add`?',
      '/gpu k8s pool add <cluster> [<name> <type> <count>]',
    ],
    [
      'slurm adduesr hpc',
      'Did you mean `/gpu slurm adduser`?',
      '/gpu slurm adduser <cluster> [--sudo] [--username U] [--form]',
    ],
    ['slurm list', 'Did you mean `/gpu slurm ls`?', '/gpu slurm ls [--page N]'],
    ['keys del laptop', 'Did you mean `/gpu keys rm`?', '/gpu keys rm <name>'],
    ['kubeconfig prod', 'Did you mean `/gpu k8s kubeconfig`?', '/gpu k8s kubeconfig <cluster>'],
    ['project usee x', 'Did you mean `/gpu project use`?', '/gpu project use <name|id>'],
    ['metrics qurey up', 'Did you mean `/gpu metrics query`?', '/gpu metrics query <promql> [--range 1h]'],
  ])('/gpu %s → %s', (text, suggestion, usage) => {
    const e = err(text);
    expect(e.suggestion).toBe(suggestion);
    expect(e.usage.split('\n')[0]).toBe(usage);
  });

  it('suggests the nearest flag and the nearest of on/off', () => {
    expect(err('create a t --premptible').suggestion).toBe('Did you mean `--preemptible`?');
    expect(err('slurm sudo hpc ada of').suggestion).toBe('Did you mean `off`?');
    expect(err('help k8ss').suggestion).toBe('Did you mean `/gpu help k8s`?');
  });

  it('says there is no such subcommand and points at help when nothing is close', () => {
    const e = err('xyzzy');
    expect(e.message).toBe('There is no subcommand "xyzzy".');
    expect(e.suggestion).toBe('Type `/gpu help` to see them all.');
    expect(e.example).toBe('/gpu help');
  });

  it('lists the subcommands of a group typed alone', () => {
    const e = err('k8s');
    expect(e.message).toContain('`/gpu k8s` needs a subcommand');
    expect(e.usage.split('\n')).toHaveLength(11);
  });
});

describe('unescapeSlackText', () => {
  it('unwraps only what Slack writes and leaves other angle brackets alone', () => {
    expect(
      unescapeSlackText('<http://a.io|a.io> <mailto:x@y.io|x@y.io> <mailto:z@y.io> <@U1|ada> <#C1|general>'),
    ).toBe('a.io x@y.io z@y.io @U1 #C1');
    expect(unescapeSlackText('<!here> <!subteam^S1|@ops> <!date^1|today>')).toBe('@here @ops today');
    expect(unescapeSlackText('a<b and c>d &lt;x&gt; &amp;amp;')).toBe('a<b and c>d <x> &amp;');
  });
});
