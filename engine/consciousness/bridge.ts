// The coupling bridge between the oscillators and the resonant field (docs/consciousness.md). It
// sets the oscillators' coupling K by mode and turns their collective phase into a pulse for the field:
//   static    K = K0
//   market    K = K0 (0.5 + p), p in [0, 1] the probability a prediction market gives (market-mediated)
//   adaptive  dK/dt = gain (r* - r): integral control that holds the order parameter at r*
// The field answers through its energy: K is scaled by min(2, E / E_ref) once a field energy is known.
import type { Pulse } from '../encode/pulse.js'
import type { OrderParameter } from './kuramoto.js'

export enum CouplingMode {
  Static = 'static',
  Market = 'market',
  Adaptive = 'adaptive',
}

export interface BridgeParams {
  mode: CouplingMode
  base_coupling: number
  /** Adaptive: the order parameter to hold, its gain, and the ceiling on K. */
  target_order: number
  gain: number
  max_coupling: number
  /** Field energy at which the field neither raises nor lowers K. */
  reference_energy: number
  /** Peak amplitude of the pulse at r = 1. */
  drive_gain: number
}

export const DEFAULT_BRIDGE: BridgeParams = {
  mode: CouplingMode.Static,
  base_coupling: 1,
  target_order: 0.6,
  gain: 0.5,
  max_coupling: 20,
  reference_energy: 1,
  drive_gain: 0.5,
}

export interface BridgeSnapshot {
  params: BridgeParams
  adaptive_coupling: number
  market_probability: number
  field_energy: number | null
}

export class CouplingBridge {
  private adaptive: number
  private market = 0.5
  private energy: number | null = null

  constructor(readonly params: BridgeParams = DEFAULT_BRIDGE) {
    this.adaptive = params.base_coupling
  }

  /** The market's current probability (market mode). */
  setMarketProbability(p: number): void {
    if (!(p >= 0 && p <= 1)) throw new Error(`a market probability is in [0, 1], got ${p}`)
    this.market = p
  }

  /** The field's current energy (all modes). */
  listen(fieldEnergy: number): void {
    this.energy = fieldEnergy
  }

  /** Adaptive mode: one step of integral control toward target_order. */
  update(order: OrderParameter, dt: number): void {
    if (this.params.mode !== CouplingMode.Adaptive) return
    this.adaptive = Math.min(
      this.params.max_coupling,
      Math.max(0, this.adaptive + this.params.gain * (this.params.target_order - order.r) * dt),
    )
  }

  /** K for the oscillators now. */
  coupling(): number {
    const p = this.params
    const base =
      p.mode === CouplingMode.Static
        ? p.base_coupling
        : p.mode === CouplingMode.Market
          ? p.base_coupling * (0.5 + this.market)
          : this.adaptive
    return this.energy === null ? base : base * Math.min(2, Math.max(0, this.energy / p.reference_energy))
  }

  /**
   * The oscillators' voice in the field: a pulse whose place on a circle round the centre, phase and
   * amplitude follow the collective phase psi and coherence r.
   */
  drive(order: OrderParameter): Pulse {
    return {
      x: 0.5 + 0.25 * Math.cos(order.psi),
      y: 0.5 + 0.25 * Math.sin(order.psi),
      radius: 0.08,
      amplitude: this.params.drive_gain * order.r,
      frequency: 1,
      phase: order.psi,
    }
  }

  toJSON(): BridgeSnapshot {
    return { params: this.params, adaptive_coupling: this.adaptive, market_probability: this.market, field_energy: this.energy }
  }

  static fromJSON(s: BridgeSnapshot): CouplingBridge {
    const b = new CouplingBridge(s.params)
    b.adaptive = s.adaptive_coupling
    b.market = s.market_probability
    b.energy = s.field_energy
    return b
  }
}
