import { describe, expect, it } from 'vitest';
import { typesFromPriceList } from '../../src/pricing/offered-types.js';
import { capacityLine, configurationLine, formatCounts, formatMinutes } from '../../src/render/capacity.js';
import { summaryMrkdwn } from '../../src/render/metrics-message.js';

describe('capacity and configuration lines', () => {
  it('says counts and durations as people do', () => {
    expect(formatCounts([8, 1, 4, 2])).toBe('1, 2, 4 or 8 GPUs');
    expect(formatCounts([1])).toBe('1 GPU');
    expect(formatCounts([2])).toBe('2 GPUs');
    expect(formatMinutes(12)).toBe('~12 min');
    expect(formatMinutes(90)).toBe('~1 h 30 min');
  });

  it('marks sold-out types and unknown prices, and escapes what the cloud sends', () => {
    expect(capacityLine({ name: 'x<y>.1x', capacity: 0 }, true)).toBe(
      ':red_circle: *x&lt;y&gt;.1x* · none available · price unknown',
    );
    expect(capacityLine({ name: 'cpu.16x', capacity: 3 }, false)).toBe(
      ':large_green_circle: *cpu.16x* · 3 available',
    );
  });

  it('says where a price-list type is offered, or that it is offered nowhere now', () => {
    const [offered, nowhere] = typesFromPriceList([
      {
        gpu_type: 'H100_SXM5_80GB',
        gpu_counts: [8],
        price_per_gpu_hr: '2.89',
        stopped_price_per_hour: '0.12',
        regions: ['ICELAND', 'NORWAY'],
        estimated_provisioning_time_minutes: 12,
      },
      {
        gpu_type: 'L40S_48GB',
        gpu_counts: [2],
        price_per_gpu_hr: '0.99',
        stopped_price_per_hour: '0.05',
        regions: [],
        estimated_provisioning_time_minutes: 5,
      },
    ]);
    expect(capacityLine(offered!, true)).toBe(
      ':large_green_circle: *h100-hgx-80gb.8x* · offered in ICELAND, NORWAY · 8× H100_SXM5_80GB · $2.89/GPU-h ($23.12/h) · ready in ~12 min',
    );
    expect(capacityLine(nowhere!, true)).toBe(
      ':red_circle: *l40s-48gb.2x* · not offered in any region now · 2× L40S_48GB · $0.99/GPU-h ($1.98/h) · ready in ~5 min',
    );
    expect(
      configurationLine({
        gpu_type: 'H100_SXM5_80GB',
        gpu_counts: [1, 8],
        price_per_gpu_hr: '2.89',
        stopped_price_per_hour: '0.12',
        regions: [],
        estimated_provisioning_time_minutes: 5,
      }),
    ).toBe(
      '*H100_SXM5_80GB* · $2.89/GPU-h · stopped $0.12/h · 1 or 8 GPUs · no regions listed · ready in ~5 min',
    );
  });

  it('keeps a metric summary inside one code block within a section', () => {
    const text = summaryMrkdwn(`a < b\n\`\`\`\n${'x'.repeat(5000)}`);
    expect(text.startsWith('```a &lt; b')).toBe(true);
    expect(text.endsWith('```')).toBe(true);
    expect(text.match(/```/g)).toHaveLength(2);
    expect(text.length).toBeLessThanOrEqual(2900);
  });
});
