// Pulse rendering (DESIGN.md section 4): amplitude * exp(-d^2 / 2r^2) * cos(frequency * d / r + phase)
// out to 3r, in normalized coordinates (cell (i, j) sits at ((i + 0.5) / n, (j + 0.5) / n)), so a
// pulse means the same at every resolution. Text wavefronts are sums of such sources. The schema is a
// type here, so that the detection pool's workers, which render pulses, load no schema library (it was
// most of their start); the engine checks a pulse against its ranges (engine/field/engine.ts).
import type { Static } from '@sinclair/typebox'
import type { PulseSchema } from '../contracts/registry.js'

export type Pulse = Static<typeof PulseSchema>

/** Defaults for the trailing arguments of PULSE (the language and the API share them). */
export const PULSE_DEFAULTS = { radius: 0.05, amplitude: 1, frequency: 0, phase: 0 } as const

/** Adds the pulse into `into` (n x n), scaled by `scale`. */
export function addPulse(into: Float32Array, n: number, p: Pulse, scale = 1): void {
  const reach = 3 * p.radius
  const x0 = Math.max(0, Math.floor((p.x - reach) * n))
  const x1 = Math.min(n - 1, Math.ceil((p.x + reach) * n))
  const y0 = Math.max(0, Math.floor((p.y - reach) * n))
  const y1 = Math.min(n - 1, Math.ceil((p.y + reach) * n))
  const a = p.amplitude * scale
  const twoR2 = 2 * p.radius * p.radius
  for (let j = y0; j <= y1; j++) {
    const dy = (j + 0.5) / n - p.y
    for (let i = x0; i <= x1; i++) {
      const dx = (i + 0.5) / n - p.x
      const d2 = dx * dx + dy * dy
      if (d2 > reach * reach) continue
      const d = Math.sqrt(d2)
      into[j * n + i] += a * Math.exp(-d2 / twoR2) * Math.cos((p.frequency * d) / p.radius + p.phase)
    }
  }
}
