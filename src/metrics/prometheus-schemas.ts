import { z } from 'zod';

// The Prometheus HTTP API's JSON (https://prometheus.io/docs/prometheus/latest/querying/api/), checked with
// zod and turned into numbers: sample values arrive as strings, including "NaN", "+Inf" and "-Inf".

export type Labels = Readonly<Record<string, string>>;

export interface Sample {
  /** Unix time in seconds (Prometheus keeps milliseconds as decimals). */
  readonly time: number;
  readonly value: number;
}

export interface VectorSample extends Sample {
  readonly metric: Labels;
}

export interface MatrixSeries {
  readonly metric: Labels;
  readonly values: readonly Sample[];
}

export type VectorData = { readonly resultType: 'vector'; readonly result: readonly VectorSample[] };
export type MatrixData = { readonly resultType: 'matrix'; readonly result: readonly MatrixSeries[] };
export type ScalarData = { readonly resultType: 'scalar'; readonly result: Sample };
export type StringData = {
  readonly resultType: 'string';
  readonly result: { readonly time: number; readonly value: string };
};
export type QueryData = VectorData | MatrixData | ScalarData | StringData;

/** Any answer: the data plus what Prometheus added beside it. */
export interface MetricsResult<T> {
  readonly data: T;
  /** Prometheus's warnings (e.g. a partial answer); show them to the person who asked. */
  readonly warnings: readonly string[];
  readonly infos: readonly string[];
}

/** Prometheus's text for a float: decimal, exponent, NaN, +Inf, -Inf. */
export function parseSampleValue(text: string): number {
  switch (text) {
    case 'NaN':
      return Number.NaN;
    case '+Inf':
    case 'Inf':
      return Number.POSITIVE_INFINITY;
    case '-Inf':
      return Number.NEGATIVE_INFINITY;
    default: {
      const value = Number(text);
      if (text.trim() === '' || Number.isNaN(value)) throw new Error(`"${text}" is not a sample value`);
      return value;
    }
  }
}

const sampleValue = z.string().transform((text, ctx) => {
  try {
    return parseSampleValue(text);
  } catch {
    ctx.addIssue({ code: 'custom', message: `"${text}" is not a sample value` });
    return z.NEVER;
  }
});

const pair = z.tuple([z.number(), sampleValue]).transform(([time, value]): Sample => ({ time, value }));
const labels = z.record(z.string(), z.string());

const vector = z.object({
  resultType: z.literal('vector'),
  result: z.array(
    z
      .object({ metric: labels, value: pair })
      .transform((s): VectorSample => ({ metric: s.metric, ...s.value })),
  ),
});
const matrix = z.object({
  resultType: z.literal('matrix'),
  result: z.array(z.object({ metric: labels, values: z.array(pair).default([]) })),
});
const scalar = z.object({ resultType: z.literal('scalar'), result: pair });
const string = z.object({
  resultType: z.literal('string'),
  result: z.tuple([z.number(), z.string()]).transform(([time, value]) => ({ time, value })),
});

export const queryDataSchema: z.ZodType<QueryData> = z.discriminatedUnion('resultType', [
  vector,
  matrix,
  scalar,
  string,
]);
export const matrixDataSchema: z.ZodType<MatrixData> = matrix;
export const stringListSchema = z.array(z.string());
export const seriesListSchema = z.array(labels);

/** The envelope every endpoint answers with. */
export const envelopeSchema = z.object({
  status: z.enum(['success', 'error']),
  data: z.unknown().optional(),
  errorType: z.string().optional(),
  error: z.string().optional(),
  warnings: z.array(z.string()).optional(),
  infos: z.array(z.string()).optional(),
});
