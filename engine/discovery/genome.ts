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
