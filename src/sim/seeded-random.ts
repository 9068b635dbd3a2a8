// Deterministic randomness for ids, IPs and fault rates, so a run with the same seed gives the same ids.

export interface SeededRandom {
  /** A float in [0, 1). */
  next(): number;
  /** A version-4-shaped UUID drawn from the seed. */
  uuid(): string;
  /** `bytes` random bytes as lowercase hex. */
  hex(bytes: number): string;
}

/** sfc32 seeded through splitmix32: small, fast and well distributed for non-cryptographic use. */
export function createSeededRandom(seed: number): SeededRandom {
  let s = seed >>> 0;
  const splitmix = (): number => {
    s = (s + 0x9e3779b9) >>> 0;
    let z = s;
    z = Math.imul(z ^ (z >>> 16), 0x85ebca6b) >>> 0;
    z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35) >>> 0;
    return (z ^ (z >>> 16)) >>> 0;
  };
  let a = splitmix();
  let b = splitmix();
  let c = splitmix();
  let d = splitmix();
  const u32 = (): number => {
    const t = (((a + b) >>> 0) + d) >>> 0;
    d = (d + 1) >>> 0;
    a = b ^ (b >>> 9);
    b = (c + (c << 3)) >>> 0;
    c = ((c << 21) | (c >>> 11)) >>> 0;
    c = (c + t) >>> 0;
    return t;
  };
  const bytes = (n: number): Buffer => {
    const out = Buffer.alloc(n);
    for (let i = 0; i < n; i += 4) {
      const v = u32();
      for (let j = 0; j < 4 && i + j < n; j++) out[i + j] = (v >>> (j * 8)) & 0xff;
    }
    return out;
  };
  return {
    next: () => u32() / 0x1_0000_0000,
    hex: (n) => bytes(n).toString('hex'),
    uuid: () => {
      const b16 = bytes(16);
      b16[6] = (b16[6]! & 0x0f) | 0x40;
      b16[8] = (b16[8]! & 0x3f) | 0x80;
      const h = b16.toString('hex');
      return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
    },
  };
}
