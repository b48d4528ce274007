// Pulse rendering (DESIGN.md section 4): amplitude * exp(-d^2 / 2r^2) * cos(frequency * d / r + phase)
// out to 3r, in normalized coordinates (cell (i, j) sits at ((i + 0.5) / n, (j + 0.5) / n)), so a
// pulse means the same at every resolution. Text wavefronts are sums of such sources.
import { requireFinite } from '../errors.js'

export interface Pulse {
  x: number
  y: number
  radius: number
  amplitude: number
  frequency: number
  phase: number
}

/** Defaults for the trailing arguments of PULSE (the language and the API share them). */
export const PULSE_DEFAULTS = { radius: 0.05, amplitude: 1, frequency: 0, phase: 0 } as const

/** Throws a bad_argument error naming the first parameter that is not finite or out of range. */
export function checkPulse(p: Pulse): Pulse {
  requireFinite('x', p.x, 0, 1)
  requireFinite('y', p.y, 0, 1)
  requireFinite('radius', p.radius, 1e-4, 1)
  requireFinite('amplitude', p.amplitude, -100, 100)
  requireFinite('frequency', p.frequency, -1000, 1000)
  requireFinite('phase', p.phase, -1e6, 1e6)
  return p
}

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
