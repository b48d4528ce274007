// The Observatory's state (zustand): the latest field state from the feed, and per control its error.
import { create } from 'zustand'
import type { DreamReport, Job, State } from '../engine/contracts/api.js'
import { PULSE_DEFAULTS } from '../engine/encode/pulse.js'
import { serverDriver, type Driver } from './driver'

export const PULSE_FIELDS = ['x', 'y', 'radius', 'amplitude', 'frequency', 'phase'] as const
export type PulseField = (typeof PULSE_FIELDS)[number]

/** The pulse form's values as numbers (a blank or bad field becomes NaN, which the server refuses by name). */
export function pulseNumbers(p: Record<PulseField, string>): Record<PulseField, number> {
  return Object.fromEntries(PULSE_FIELDS.map((k) => [k, p[k].trim() === '' ? NaN : Number(p[k])])) as Record<PulseField, number>
}

export type Control = 'write' | 'pulse' | 'resonate' | 'dream' | 'feed' | 'conditions' | 'evolve' | 'run' | 'ask'

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
  pulse: {
    x: '0.5',
    y: '0.5',
    ...(Object.fromEntries(Object.entries(PULSE_DEFAULTS).map(([k, v]) => [k, String(v)])) as Record<keyof typeof PULSE_DEFAULTS, string>),
  },
  setDriver: (driver, engine) => set({ driver, engine }),
  setState: (state) => set({ state }),
  setError: (c, message) => set((s) => ({ errors: { ...s.errors, [c]: message } })),
  setDream: (dream) => set({ dream }),
  setJob: (job) => set((s) => ({ jobs: { ...s.jobs, [job.id]: job } })),
  setPulse: (p) => set((s) => ({ pulse: { ...s.pulse, ...p } })),
}))
