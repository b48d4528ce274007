// The Observatory's state (zustand): the latest field state from the feed, and per control its error.
import { create } from 'zustand'
import type { Job, State } from './api'
import { serverDriver, type Driver } from './driver'

export const PULSE_FIELDS = ['x', 'y', 'radius', 'amplitude', 'frequency', 'phase'] as const
export type PulseField = (typeof PULSE_FIELDS)[number]

/** The pulse form's values as numbers (a blank or bad field becomes NaN, which the server refuses by name). */
export function pulseNumbers(p: Record<PulseField, string>): Record<PulseField, number> {
  return Object.fromEntries(PULSE_FIELDS.map((k) => [k, p[k].trim() === '' ? NaN : Number(p[k])])) as Record<PulseField, number>
}

export type Control = 'write' | 'pulse' | 'resonate' | 'dream' | 'feed' | 'conditions' | 'evolve' | 'run'

export interface DreamReport {
  mode: string
  steps_observed: number
  energy_before: number
  energy_after: number
  pruned_fraction: number
  amplified_fraction: number
  mutated_cells: number
}

interface Store {
  driver: Driver
  /** Words for the mode line: which engine the controls act on. */
  engine: string
  state: State | undefined
  errors: Partial<Record<Control, string>>
  dream: DreamReport | undefined
  jobs: Record<string, Job>
  /** The pulse form as typed (text, so that '0.' survives while typing); numbers at use. */
  pulse: Record<PulseField, string>
  setDriver(d: Driver, engine: string): void
  setState(s: State): void
  setError(c: Control, message: string | undefined): void
  setDream(r: DreamReport): void
  setJob(j: Job): void
  setPulse(p: Partial<Store['pulse']>): void
}

export const useStore = create<Store>((set) => ({
  driver: serverDriver,
  engine: 'Server',
  state: undefined,
  errors: {},
  dream: undefined,
  jobs: {},
  pulse: { x: '0.5', y: '0.5', radius: '0.05', amplitude: '1', frequency: '0', phase: '0' },
  setDriver: (driver, engine) => set({ driver, engine }),
  setState: (state) => set({ state }),
  setError: (c, message) => set((s) => ({ errors: { ...s.errors, [c]: message } })),
  setDream: (dream) => set({ dream }),
  setJob: (job) => set((s) => ({ jobs: { ...s.jobs, [job.id]: job } })),
  setPulse: (p) => set((s) => ({ pulse: { ...s.pulse, ...p } })),
}))
