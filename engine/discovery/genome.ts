// Pulse genomes and the operators of the evolutionary search (docs/discovery.md), driven by a
// seeded generator so that a run is reproducible from its seed.
import type { Genome } from '../contracts/registry.js'
import type { Pulse } from '../encode/pulse.js'
import { gaussian } from '../util/rng.js'

export const MAX_PULSES = 6

const clamp = (v: number, lo: number, hi: number) => Math.min(hi, Math.max(lo, v))

export interface GenomeBounds {
  min_steps: number
  max_steps: number
}

export function randomPulse(rand: () => number): Pulse {
  return {
    x: 0.2 + 0.6 * rand(),
    y: 0.2 + 0.6 * rand(),
    radius: 0.03 + 0.12 * rand(),
    amplitude: (0.4 + 1.1 * rand()) * (rand() < 0.5 ? -1 : 1),
    frequency: 6 * rand(),
    phase: 2 * Math.PI * rand(),
  }
}

export function randomGenome(rand: () => number, b: GenomeBounds): Genome {
  const count = 1 + Math.floor(rand() * MAX_PULSES)
  const modes = ['none', 'light', 'deep'] as const
  return {
    pulses: Array.from({ length: count }, () => randomPulse(rand)),
    resonate_steps: roundSteps(b.min_steps + rand() * (b.max_steps - b.min_steps), b),
    dream: modes[Math.floor(rand() * 3)],
  }
}

function roundSteps(steps: number, b: GenomeBounds): number {
  return clamp(Math.round(steps / 10) * 10, b.min_steps, b.max_steps)
}

/** Isoline variation (Vassiliades and Mouret, 2018): isotropic jitter plus a step along the line to the other parent. */
export const ISOLINE = { iso: 0.02, line: 0.3 } as const
/** Span of each pulse parameter, so that the isotropic jitter is a share of it. */
const SPAN = { x: 1, y: 1, radius: 0.2, amplitude: 4, frequency: 8, phase: 2 * Math.PI } as const

/**
 * A child of two elites: each pulse of `a` moves by ISOLINE.iso of its span at random plus one
 * shared Gaussian step along the line to the matching pulse of `b` (pulses matched by index, cycling
 * over b's). Elites in different cells share useful structure (the "elite hypervolume"), so the line
 * between them is where new elites tend to lie.
 */
export function isoline(a: Genome, b: Genome, rand: () => number, bounds: GenomeBounds): Genome {
  const along = ISOLINE.line * gaussian(rand)
  const move = (k: keyof typeof SPAN, p: number, q: number) => p + ISOLINE.iso * SPAN[k] * gaussian(rand) + along * (q - p)
  const pulses = a.pulses.map((p, i) => {
    const q = b.pulses[i % b.pulses.length]
    return {
      x: clamp(move('x', p.x, q.x), 0.05, 0.95),
      y: clamp(move('y', p.y, q.y), 0.05, 0.95),
      radius: clamp(move('radius', p.radius, q.radius), 0.02, 0.2),
      amplitude: clamp(move('amplitude', p.amplitude, q.amplitude), -2, 2),
      frequency: clamp(move('frequency', p.frequency, q.frequency), 0, 8),
      phase: move('phase', p.phase, q.phase),
    }
  })
  return { pulses, resonate_steps: roundSteps(a.resonate_steps + along * (b.resonate_steps - a.resonate_steps), bounds), dream: a.dream }
}

/** Jitters each pulse parameter with probability 0.3; adds or removes a pulse and flips the dream mode with probability 0.1 each. */
export function mutate(g: Genome, rand: () => number, bounds: GenomeBounds): Genome {
  const jitter = (v: number, sigma: number) => (rand() < 0.3 ? v + sigma * gaussian(rand) : v)
  let pulses = g.pulses.map((p) => ({
    x: clamp(jitter(p.x, 0.05), 0.05, 0.95),
    y: clamp(jitter(p.y, 0.05), 0.05, 0.95),
    radius: clamp(rand() < 0.3 ? p.radius * Math.exp(0.2 * gaussian(rand)) : p.radius, 0.02, 0.2),
    amplitude: clamp(jitter(p.amplitude, 0.2), -2, 2),
    frequency: clamp(jitter(p.frequency, 0.5), 0, 8),
    phase: jitter(p.phase, 0.5),
  }))
  if (rand() < 0.1 && pulses.length < MAX_PULSES) pulses = [...pulses, randomPulse(rand)]
  if (rand() < 0.1 && pulses.length > 1) pulses.splice(Math.floor(rand() * pulses.length), 1)
  const modes = ['none', 'light', 'deep'] as const
  return {
    pulses,
    resonate_steps: rand() < 0.3 ? roundSteps(g.resonate_steps * Math.exp(0.2 * gaussian(rand)), bounds) : g.resonate_steps,
    dream: rand() < 0.1 ? modes[Math.floor(rand() * 3)] : g.dream,
  }
}
