import {
  type GpuLoad,
  gpuReading,
  gpuStream,
  hashString,
  type LoadSetting,
  resolveLoad,
} from './gpu-pattern.js';

// The simulator's GPU exporter: DCGM-exporter-style gauges for every GPU of every running instance, in
// Prometheus text format 0.0.4. Label strings are built once per instance and reused on every scrape,
// so a scrape costs one pass over instances × GPUs.

export interface ExportedInstance {
  readonly id: string;
  readonly name: string;
  readonly type: string;
  readonly projectId: string;
  readonly gpuCount: number;
  readonly gpuModel: string;
  readonly gpuMemoryGiB: number;
  readonly maxPowerWatts: number;
  readonly startedAt: number;
  readonly load: LoadSetting;
}

export const EXPORTER_CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8';

/** The DCGM field names the exporter writes, with dcgm-exporter's help texts. */
export const DCGM_FAMILIES = [
  { name: 'DCGM_FI_DEV_GPU_UTIL', help: 'GPU utilization (in %).' },
  { name: 'DCGM_FI_DEV_FB_USED', help: 'Framebuffer memory used (in MiB).' },
  { name: 'DCGM_FI_DEV_FB_FREE', help: 'Framebuffer memory free (in MiB).' },
  { name: 'DCGM_FI_DEV_POWER_USAGE', help: 'Power draw (in W).' },
  { name: 'DCGM_FI_DEV_GPU_TEMP', help: 'GPU temperature (in C).' },
] as const;

interface CachedInstance {
  readonly fingerprint: string;
  /** One label block per GPU, without braces. */
  readonly labels: readonly string[];
  readonly streams: readonly number[];
}

export interface GpuExporter {
  /** The exposition in a few large pieces (one per metric family), to write without joining 100 MB. */
  renderChunks(instances: readonly ExportedInstance[], nowMs: number): string[];
  /** The whole exposition for these instances at `nowMs`. */
  render(instances: readonly ExportedInstance[], nowMs: number): string;
}

export function createGpuExporter(seed: number): GpuExporter {
  const cache = new Map<string, CachedInstance>();
  let scrapes = 0;
  let lastRenderSeconds = 0;

  function labelsFor(inst: ExportedInstance): CachedInstance {
    const fingerprint = `${inst.name}\u0000${inst.type}\u0000${inst.projectId}\u0000${inst.gpuCount}\u0000${inst.gpuModel}`;
    const cached = cache.get(inst.id);
    if (cached?.fingerprint === fingerprint) return cached;
    const labels: string[] = [];
    const streams: number[] = [];
    for (let gpu = 0; gpu < inst.gpuCount; gpu++) {
      labels.push(
        [
          `gpu="${gpu}"`,
          `UUID="${escapeLabel(gpuUuid(seed, inst.id, gpu))}"`,
          `device="nvidia${gpu}"`,
          `modelName="${escapeLabel(inst.gpuModel)}"`,
          `Hostname="${escapeLabel(inst.name)}"`,
          `instance_id="${escapeLabel(inst.id)}"`,
          `instance_name="${escapeLabel(inst.name)}"`,
          `instance_type="${escapeLabel(inst.type)}"`,
          `project_id="${escapeLabel(inst.projectId)}"`,
        ].join(','),
      );
      streams.push(gpuStream(seed, inst.id, gpu));
    }
    const entry = { fingerprint, labels, streams };
    cache.set(inst.id, entry);
    return entry;
  }

  function renderChunks(instances: readonly ExportedInstance[], nowMs: number): string[] {
    const started = performance.now();
    const families: string[][] = DCGM_FAMILIES.map(() => []);
    const [util, fbUsed, fbFree, power, temp] = families as [
      string[],
      string[],
      string[],
      string[],
      string[],
    ];
    const seen = new Set<string>();
    let gpus = 0;
    for (const inst of instances) {
      if (inst.gpuCount <= 0 || inst.maxPowerWatts <= 0) continue;
      seen.add(inst.id);
      const { labels, streams } = labelsFor(inst);
      const load: GpuLoad = resolveLoad(inst.load, inst.id, inst.name);
      for (let gpu = 0; gpu < inst.gpuCount; gpu++) {
        const reading = gpuReading(streams[gpu]!, nowMs, load, inst);
        const l = labels[gpu]!;
        util.push(`DCGM_FI_DEV_GPU_UTIL{${l}} ${reading.util}`);
        fbUsed.push(`DCGM_FI_DEV_FB_USED{${l}} ${reading.fbUsedMiB}`);
        fbFree.push(`DCGM_FI_DEV_FB_FREE{${l}} ${reading.fbFreeMiB}`);
        power.push(`DCGM_FI_DEV_POWER_USAGE{${l}} ${reading.powerW}`);
        temp.push(`DCGM_FI_DEV_GPU_TEMP{${l}} ${reading.tempC}`);
        gpus++;
      }
    }
    // Forget instances that stopped, so the cache stays the size of the running fleet.
    if (cache.size > seen.size) for (const id of cache.keys()) if (!seen.has(id)) cache.delete(id);
    scrapes++;
    const parts: string[] = [];
    DCGM_FAMILIES.forEach((family, i) => {
      const samples = families[i]!;
      const head = `# HELP ${family.name} ${family.help}\n# TYPE ${family.name} gauge\n`;
      parts.push(samples.length > 0 ? `${head}${samples.join('\n')}\n` : head);
    });
    const self = [
      '# HELP gpuops_sim_exporter_instances Running instances with GPUs exported on this scrape.',
      '# TYPE gpuops_sim_exporter_instances gauge',
      `gpuops_sim_exporter_instances ${seen.size}`,
      '# HELP gpuops_sim_exporter_gpus GPUs exported on this scrape.',
      '# TYPE gpuops_sim_exporter_gpus gauge',
      `gpuops_sim_exporter_gpus ${gpus}`,
      '# HELP gpuops_sim_exporter_scrapes_total Scrapes served since the simulator started.',
      '# TYPE gpuops_sim_exporter_scrapes_total counter',
      `gpuops_sim_exporter_scrapes_total ${scrapes}`,
      '# HELP gpuops_sim_exporter_render_seconds Time the previous scrape took to build.',
      '# TYPE gpuops_sim_exporter_render_seconds gauge',
      `gpuops_sim_exporter_render_seconds ${lastRenderSeconds}`,
    ];
    parts.push(`${self.join('\n')}\n`);
    lastRenderSeconds = (performance.now() - started) / 1000;
    return parts;
  }

  return {
    renderChunks,
    render: (instances, nowMs) => renderChunks(instances, nowMs).join(''),
  };
}

/** A stable NVIDIA-style GPU UUID (GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx) for one GPU of one instance. */
export function gpuUuid(seed: number, instanceId: string, gpu: number): string {
  const hex = [0, 1, 2, 3]
    .map((i) => hashString(`${instanceId}/${gpu}/${i}`, seed).toString(16).padStart(8, '0'))
    .join('');
  return `GPU-${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20, 32)}`;
}

/** Label values escape backslash, double quote and newline (text format 0.0.4). */
export function escapeLabel(value: string): string {
  return value.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n');
}
