/** The three shapes of the infrastructure API (spec: Versioning). */
export const SHAPES = ['A', 'B', 'C'] as const;
export type Shape = (typeof SHAPES)[number];
