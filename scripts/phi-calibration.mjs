#!/usr/bin/env node
// Prints the figures behind phi's levels (docs/consciousness.md): phi at the publisher's window for
// i.i.d. noise, lockstep, independent blocks and rings of known Phi_AR. Needs `npm run build`.
// Usage: node scripts/phi-calibration.mjs [windows] [lengths]   (default 200 and 32,128)
const { phi, levelOf, LEVEL_THRESHOLDS } = await import('../dist/engine/consciousness/iit.js')
const { rng } = await import('../dist/engine/util/rng.js')
const windows = Number(process.argv[2]) || 200
const lengths = (process.argv[3] ?? '32,128').split(',').map(Number)
const gaussian = (r) => Math.sqrt(-2 * Math.log(1 - r())) * Math.cos(2 * Math.PI * r())
const n = 12
const ring = (c) => Array.from({ length: n }, (_, i) => Array.from({ length: n }, (_, j) => (i === j ? 0.2 : j === (i + 1) % n ? c : 0)))
const blocks = Array.from({ length: n }, (_, i) =>
  Array.from({ length: n }, (_, j) => (i === j ? 0.2 : j === (i < 6 ? (i + 1) % 6 : 6 + ((i - 5) % 6)) ? 0.7 : 0)),
)
function autoregressive(a, t, seed) {
  const r = rng(seed)
  let x = new Float64Array(n)
  const out = []
  for (let k = 0; k < t + 100; k++) {
    const y = Float64Array.from(a, (row) => row.reduce((s, v, j) => s + v * x[j], gaussian(r)))
    if (k >= 100) out.push(y)
    x = y
  }
  return out
}
/** Phi_AR from 20,000 samples: the system's own value, near enough to exact for the table. */
const truth = (a) => phi(autoregressive(a, 20000, 1), { surrogates: 0 }).phi_ar
const cases = [
  [
    'i.i.d. noise',
    () => 0,
    (s, t) => {
      const r = rng(s)
      return Array.from({ length: t }, () => Float64Array.from({ length: n }, () => gaussian(r)))
    },
  ],
  [
    'lockstep (one sine)',
    () => 0,
    (s, t) => {
      const r = rng(s)
      const [w, p] = [0.2 + r(), 6 * r()]
      return Array.from({ length: t }, (_, k) => new Float64Array(n).fill(Math.sin(w * k + p)))
    },
  ],
  ['two independent rings of 6', () => truth(blocks), (s, t) => autoregressive(blocks, t, s)],
  ...[0.3, 0.5, 0.7].map((c) => [`ring, neighbour coupling ${c}`, () => truth(ring(c)), (s, t) => autoregressive(ring(c), t, s)]),
]
const q = (xs, p) => [...xs].sort((a, b) => a - b)[Math.floor(p * (xs.length - 1))]
console.log(`levels: ${LEVEL_THRESHOLDS.map(([l, t]) => `${l} >= ${t}`).join(', ')}; ${windows} windows each, 99 surrogates`)
console.log(
  'system | T | Phi_AR (truth) | raw Phi_AR mean | null mean | null level mean | phi median | phi q99 | share per level (dormant..lucid) | ms per window (cpu)',
)
for (const t of lengths) {
  for (const [name, exact, gen] of cases) {
    const reads = []
    const cpu = process.cpuUsage()
    for (let s = 0; s < windows; s++) reads.push(phi(gen(1000 + s, t), { seed: s + 1 }))
    const used = process.cpuUsage(cpu)
    const ms = (used.user + used.system) / 1000 / windows
    const mean = (k) => reads.reduce((a, r) => a + r[k], 0) / reads.length
    const shares = ['dormant', 'reactive', 'aware', 'reflective', 'lucid'].map((l) =>
      (reads.filter((r) => levelOf(r.phi) === l).length / reads.length).toFixed(3),
    )
    console.log(
      `${name} | ${t} | ${exact().toFixed(3)} | ${mean('phi_ar').toFixed(3)} | ${mean('null_mean').toFixed(3)} | ${mean('null_level').toFixed(3)} | ${q(
        reads.map((r) => r.phi),
        0.5,
      ).toFixed(3)} | ${q(
        reads.map((r) => r.phi),
        0.99,
      ).toFixed(3)} | ${shares.join(' ')} | ${ms.toFixed(1)}`,
    )
  }
}
