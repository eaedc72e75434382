/**
 * One seeded generator for the test tools that must draw the same on every machine: the fuzzer's
 * reconnect jitter (test/fuzz/harness.ts) and the mutation sample's lines (test/mutation/main.ts).
 */

/**
 * mulberry32: a small deterministic PRNG.
 * @param seed any number (its low 32 bits are used).
 * @returns a generator of numbers in [0, 1), the same sequence for the same seed on every machine.
 */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
