// A material's fingerprint: three numbers measured by a fixed protocol on a 64 x 64 CPU field
// (docs/materials.md). Every pair of built-ins differs by at least FINGERPRINT_MIN_DIFFERENCE on one.
import type { Material } from '../contracts/material.js'
import { rms } from '../util/vector.js'
import { createEngine, type Engine } from './engine.js'

export interface Fingerprint {
  /** Energy left after 2,000 steps from a centred pulse, as a fraction of what the pulse put in (no noise). */
  energy_retention: number
  /** RMS radius of u^2 about the centre 40 steps after that pulse, as a fraction of the side: speed and spreading. */
  dispersion: number
  /** RMS of u after 500 steps from rest at the material's own temperature: the thermal floor. */
  noise: number
}

/** Relative difference that counts as "different" (noise below NOISE_FLOOR counts as zero). */
export const FINGERPRINT_MIN_DIFFERENCE = 0.1
export const NOISE_FLOOR = 1e-6
const N = 64
const CENTRE_PULSE = { x: 0.5, y: 0.5, radius: 0.05, amplitude: 1, frequency: 0, phase: 0 }

export async function fingerprint(material: Material): Promise<Fingerprint> {
  const open = (temperature_k: number) => createEngine({ backend: 'cpu', size: N, material, temperature_k, timeline_interval: 0 })
  const quiet = await open(0)
  let dispersion: number
  let retention: number
  try {
    await quiet.pulse(CENTRE_PULSE)
    const injected = (await quiet.books())[0].injected
    await quiet.step(40)
    dispersion = rmsRadius(quiet, await quiet.readU())
    await quiet.step(1960)
    retention = (await quiet.books())[0].energy / injected
  } finally {
    quiet.destroy()
  }
  const warm = await open(material.temperature_k)
  try {
    await warm.step(500)
    const u = await warm.readU()
    return { energy_retention: retention, dispersion, noise: rms(u) }
  } finally {
    warm.destroy()
  }
}

function rmsRadius(engine: Engine, u: Float32Array): number {
  const n = engine.size
  let mass = 0
  let moment = 0
  for (let y = 0; y < n; y++) {
    for (let x = 0; x < n; x++) {
      const w = u[y * n + x] ** 2
      mass += w
      moment += w * (((x + 0.5) / n - 0.5) ** 2 + ((y + 0.5) / n - 0.5) ** 2)
    }
  }
  return Math.sqrt(moment / (mass || 1))
}

function relative(a: number, b: number, floor = 0): number {
  if (Math.abs(a) <= floor && Math.abs(b) <= floor) return 0
  return Math.abs(a - b) / Math.max(Math.abs(a), Math.abs(b))
}

/** The largest relative difference between two fingerprints, and on which measure. */
export function fingerprintDistance(a: Fingerprint, b: Fingerprint): { measure: keyof Fingerprint; difference: number } {
  const d: [keyof Fingerprint, number][] = [
    ['energy_retention', relative(a.energy_retention, b.energy_retention)],
    ['dispersion', relative(a.dispersion, b.dispersion)],
    ['noise', relative(a.noise, b.noise, NOISE_FLOOR)],
  ]
  const [measure, difference] = d.reduce((best, x) => (x[1] > best[1] ? x : best))
  return { measure, difference }
}
