import { describe, expect, it } from 'vitest';
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
    expect(capacityLine({ type: 'x<y>.1x', capacity: 0, pricesKnown: true })).toBe(
      ':red_circle: *x&lt;y&gt;.1x* · none available · price unknown',
    );
    expect(capacityLine({ type: 'cpu.16x', capacity: 3, pricesKnown: false })).toBe(
      ':large_green_circle: *cpu.16x* · 3 available',
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
