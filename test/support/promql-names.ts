import { parser } from '@prometheus-io/lezer-promql';
import { createBotMetrics } from '../../src/obs/bot-metrics.js';

// What the shipped rules and dashboard may name: the series a running bot exports, read from the
// bot's own registry (every metric of createBotMetrics, with a histogram's _bucket, _sum and _count),
// and the PromQL in them parsed with the Prometheus project's own grammar.

/** Every series name a gpuops process can export at /metrics. */
export async function exportedSeries(): Promise<Set<string>> {
  const metrics = createBotMetrics({ info: { role: 'all', shape: 'B', mode: 'http' } });
  const names = new Set<string>();
  for (const metric of await metrics.registry.getMetricsAsJSON()) {
    names.add(metric.name);
    if (String(metric.type) === 'histogram') {
      for (const suffix of ['_bucket', '_sum', '_count']) names.add(`${metric.name}${suffix}`);
    }
  }
  return names;
}

/**
 * The metric names of every selector in `expr`; throws naming the spot where the grammar stopped
 * making sense of it.
 */
export function selectedNames(expr: string): string[] {
  const tree = parser.parse(expr);
  const names: string[] = [];
  let error: number | undefined;
  tree.iterate({
    enter(node) {
      if (node.type.isError && error === undefined) error = node.from;
      if (node.name === 'VectorSelector') {
        const id = node.node.getChild('Identifier');
        if (id) names.push(expr.slice(id.from, id.to));
      }
    },
  });
  if (error !== undefined) {
    throw new Error(
      `PromQL does not parse near character ${error + 1}: ${expr.slice(Math.max(0, error - 20), error + 20)}`,
    );
  }
  return names;
}
