// What the simulated cloud sells: instance types (infrastructure API), the GPU configurations with
// prices (platform API), and the starting capacity of each type. One table so that capacity, prices,
// the GPU exporter and cost estimates all agree.

export interface SimInstanceType {
  /** Instance type name as the infrastructure API uses it (the reference's example: h100-hgx-80gb.8x). */
  readonly name: string;
  /** The platform API's gpu_type for the same hardware. */
  readonly gpuType: string;
  readonly gpuModel: string;
  readonly gpuCount: number;
  readonly gpuMemoryGiB: number;
  readonly maxPowerWatts: number;
  readonly cpu: number;
  readonly memory: string;
  /** Machines of this type the simulator can still hand out at start. */
  readonly capacity: number;
}

export const SIM_INSTANCE_TYPES: readonly SimInstanceType[] = [
  {
    name: 'h100-hgx-80gb.8x',
    gpuType: 'H100_SXM5_80GB',
    gpuModel: 'NVIDIA H100 80GB HBM3',
    gpuCount: 8,
    gpuMemoryGiB: 80,
    maxPowerWatts: 700,
    cpu: 192,
    memory: '1920Gi',
    capacity: 4,
  },
  {
    name: 'h100-hgx-80gb.1x',
    gpuType: 'H100_SXM5_80GB',
    gpuModel: 'NVIDIA H100 80GB HBM3',
    gpuCount: 1,
    gpuMemoryGiB: 80,
    maxPowerWatts: 700,
    cpu: 24,
    memory: '240Gi',
    capacity: 16,
  },
  {
    name: 'a100-sxm4-80gb.4x',
    gpuType: 'A100_SXM4_80GB',
    gpuModel: 'NVIDIA A100-SXM4-80GB',
    gpuCount: 4,
    gpuMemoryGiB: 80,
    maxPowerWatts: 400,
    cpu: 64,
    memory: '960Gi',
    capacity: 8,
  },
  {
    name: 'l40s-48gb.2x',
    gpuType: 'L40S_48GB',
    gpuModel: 'NVIDIA L40S',
    gpuCount: 2,
    gpuMemoryGiB: 48,
    maxPowerWatts: 350,
    cpu: 32,
    memory: '256Gi',
    capacity: 12,
  },
  {
    name: 'rtx-a5000-24gb.1x',
    gpuType: 'RTX_A5000_24GB',
    gpuModel: 'NVIDIA RTX A5000',
    gpuCount: 1,
    gpuMemoryGiB: 24,
    maxPowerWatts: 230,
    cpu: 8,
    memory: '64Gi',
    capacity: 24,
  },
  {
    name: 'cpu.16x',
    gpuType: 'CPU',
    gpuModel: '',
    gpuCount: 0,
    gpuMemoryGiB: 0,
    maxPowerWatts: 0,
    cpu: 16,
    memory: '64Gi',
    capacity: 50,
  },
];

export interface SimConfiguration {
  readonly gpu_type: string;
  readonly gpu_counts: readonly number[];
  readonly price_per_gpu_hr: string;
  readonly stopped_price_per_hour: string;
  readonly regions: readonly string[];
  readonly estimated_provisioning_time_minutes: number;
}

/** The GPU counts sold as `gpuType`: exactly the instance types above, so every listing agrees. */
const countsOf = (gpuType: string): number[] =>
  SIM_INSTANCE_TYPES.filter((t) => t.gpuType === gpuType)
    .map((t) => t.gpuCount)
    .sort((a, b) => a - b);

/** The platform API's configurations: decimal strings for prices, as the spec says. */
export const SIM_CONFIGURATIONS: readonly SimConfiguration[] = [
  {
    gpu_type: 'H100_SXM5_80GB',
    gpu_counts: countsOf('H100_SXM5_80GB'),
    price_per_gpu_hr: '2.89',
    stopped_price_per_hour: '0.12',
    regions: ['ICELAND', 'NORWAY'],
    estimated_provisioning_time_minutes: 12,
  },
  {
    gpu_type: 'A100_SXM4_80GB',
    gpu_counts: countsOf('A100_SXM4_80GB'),
    price_per_gpu_hr: '1.65',
    stopped_price_per_hour: '0.08',
    regions: ['CANADA', 'NORWAY'],
    estimated_provisioning_time_minutes: 8,
  },
  {
    gpu_type: 'L40S_48GB',
    gpu_counts: countsOf('L40S_48GB'),
    price_per_gpu_hr: '0.99',
    stopped_price_per_hour: '0.05',
    regions: ['NORWAY'],
    estimated_provisioning_time_minutes: 5,
  },
  {
    gpu_type: 'RTX_A5000_24GB',
    gpu_counts: countsOf('RTX_A5000_24GB'),
    price_per_gpu_hr: '0.45',
    stopped_price_per_hour: '0.02',
    regions: ['NORWAY', 'CANADA'],
    estimated_provisioning_time_minutes: 4,
  },
];

export function findSimType(name: string): SimInstanceType | undefined {
  return SIM_INSTANCE_TYPES.find((t) => t.name === name);
}
