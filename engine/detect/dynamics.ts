// Classes from dynamics (docs/detection.md): a structure found on a stability map is measured over a
// recorded window of the field itself (how it oscillates, whether it stands or rotates, what it keeps).

/** A recorded window of one field: `frames` snapshots of u (n x n each), `dt` steps apart. */
export interface Recording {
  n: number
  dt: number
  frames: readonly Float32Array[]
}

export interface DynamicsFeatures {
  /** Stability mass of the structure's cells in the later window over the earlier one: 1 holds, 0 gone. */
  sustain: number
  /** Dominant frequency of the structure, cycles per step. */
  frequency: number
  /** |sum A^2| / sum |A|^2 of the dominant mode's complex amplitudes A: 1 = every cell in phase or anti-phase (standing), 0 = phases all round (rotating). */
  standing: number
  /** Turns of the dominant mode's phase around the structure's centroid (a signed integer). */
  winding: number
  /** Dominant frequency of the stronger region over the weaker one's, when the structure has two regions; 0 otherwise. */
  region_ratio: number
}

/** Lowest DFT bin whose ratio to another is trusted (a 2:1 of bins 2 and 1 is resolution, not locking). */
export const MIN_RATIO_BIN = 3

/** Frequency and per-cell complex amplitude of the strongest oscillation over `cells` (Hann-windowed DFT, DC removed). */
export function dominantMode(rec: Recording, cells: readonly number[]): { bin: number; frequency: number; re: Float64Array; im: Float64Array } {
  const T = rec.frames.length
  const bins = Math.floor(T / 2)
  const cos = new Float64Array((bins + 1) * T)
  const sin = new Float64Array((bins + 1) * T)
  for (let k = 0; k <= bins; k++) {
    for (let t = 0; t < T; t++) {
      cos[k * T + t] = Math.cos((2 * Math.PI * k * t) / T)
      sin[k * T + t] = Math.sin((2 * Math.PI * k * t) / T)
    }
  }
  // Hann window: a mode between two bins leaks into its neighbours, not across the spectrum
  const hann = Float64Array.from({ length: T }, (_, t) => 0.5 - 0.5 * Math.cos((2 * Math.PI * (t + 0.5)) / T))
  const series = cells.map((c) => {
    const s = Float64Array.from(rec.frames, (f) => f[c])
    const mean = s.reduce((a, b) => a + b, 0) / T
    return s.map((v, t) => (v - mean) * hann[t])
  })
  const power = new Float64Array(bins + 1)
  const re = new Float64Array(cells.length * (bins + 1))
  const im = new Float64Array(cells.length * (bins + 1))
  series.forEach((s, i) => {
    for (let k = 1; k <= bins; k++) {
      let a = 0
      let b = 0
      for (let t = 0; t < T; t++) {
        a += s[t] * cos[k * T + t]
        b -= s[t] * sin[k * T + t]
      }
      re[i * (bins + 1) + k] = a
      im[i * (bins + 1) + k] = b
      power[k] += a * a + b * b
    }
  })
  let bin = 1
  for (let k = 2; k <= bins; k++) if (power[k] > power[bin]) bin = k
  const pick = (all: Float64Array) => Float64Array.from(cells, (_, i) => all[i * (bins + 1) + bin])
  return { bin, frequency: bin / (T * rec.dt), re: pick(re), im: pick(im) }
}

/** Turns of the mode's phase along a circle of radius r around (cx, cy), skipping weak cells; 0 when too little of the circle is strong. */
function windingOf(n: number, amp: Map<number, [number, number]>, cx: number, cy: number, r: number): number {
  const POINTS = 32
  const phases: number[] = []
  let peak = 0
  const samples: [number, number][] = []
  for (let k = 0; k < POINTS; k++) {
    const a = (2 * Math.PI * k) / POINTS
    const x = Math.round(cx + r * Math.cos(a))
    const y = Math.round(cy + r * Math.sin(a))
    const v = x >= 0 && y >= 0 && x < n && y < n ? amp.get(y * n + x) : undefined
    samples.push(v ?? [0, 0])
    if (v) peak = Math.max(peak, Math.hypot(v[0], v[1]))
  }
  for (const [re, im] of samples) if (peak > 0 && Math.hypot(re, im) >= 0.2 * peak) phases.push(Math.atan2(im, re))
  // a winding needs the phase followed most of the way round
  if (phases.length < 0.75 * POINTS) return 0
  let turn = 0
  for (let i = 0; i < phases.length; i++) {
    let d = phases[(i + 1) % phases.length] - phases[i]
    d -= 2 * Math.PI * Math.round(d / (2 * Math.PI))
    turn += d
  }
  return Math.round(turn / (2 * Math.PI))
}

/**
 * Measures the structure (its `cells`, centroid in cells, mean radius in cells) over the recording;
 * `second` is the stability map of a later window (mean |u|), `regions` the structure's two halves
 * (or its two regions) when it has them.
 */
export function measureDynamics(rec: Recording, cells: readonly number[], first: Float32Array, second: Float32Array, centre: { x: number; y: number; radius: number }, regions?: [readonly number[], readonly number[]]): DynamicsFeatures {
  let m1 = 0
  let m2 = 0
  for (const c of cells) {
    m1 += first[c]
    m2 += second[c]
  }
  // the mode over the structure and a ring of cells around it, so that the winding circle sees it all
  const n = rec.n
  const reach = new Set<number>(cells)
  const r = Math.max(1, centre.radius)
  for (let y = Math.max(0, Math.floor(centre.y - 1.5 * r)); y <= Math.min(n - 1, Math.ceil(centre.y + 1.5 * r)); y++) {
    for (let x = Math.max(0, Math.floor(centre.x - 1.5 * r)); x <= Math.min(n - 1, Math.ceil(centre.x + 1.5 * r)); x++) reach.add(y * n + x)
  }
  const cellsOfMode = [...reach]
  const mode = dominantMode(rec, cellsOfMode)
  const amp = new Map<number, [number, number]>()
  cellsOfMode.forEach((c, i) => amp.set(c, [mode.re[i], mode.im[i]]))
  let sr = 0
  let si = 0
  let total = 0
  for (const c of cells) {
    const [re, im] = amp.get(c)!
    sr += re * re - im * im
    si += 2 * re * im
    total += re * re + im * im
  }
  // a ratio of two bins means something only when both are resolved: at least MIN_RATIO_BIN cycles in the window
  let region_ratio = 0
  if (regions) {
    const [a, b] = regions.map((cs) => dominantMode(rec, cs).bin)
    if (Math.min(a, b) >= MIN_RATIO_BIN) region_ratio = Math.max(a, b) / Math.min(a, b)
  }
  // a winding counts when the circles at the mean radius and at 0.7 of it both see it
  const turns = [1, 0.7].map((k) => windingOf(n, amp, centre.x, centre.y, k * r))
  return {
    sustain: m1 > 0 ? m2 / m1 : 0,
    frequency: mode.frequency,
    standing: total > 0 ? Math.hypot(sr, si) / total : 0,
    winding: turns[0] === turns[1] ? turns[0] : 0,
    region_ratio,
  }
}
