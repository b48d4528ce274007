// What the engine asks of a compute backend. The GPU (WGSL) and CPU (WASM SIMD) backends implement
// it over the same kernels; engine/cpu/field_step.ts is the oracle both are tested against.
import type { StepParams } from './params.js'

/** One timeline sample: for each field, the energy and the ledger totals after `step` steps. */
export interface LedgerSample {
  step: number
  /** Per field: [energy, bulk, boundary, saturation, noise]. */
  fields: Float64Array[]
}

export interface StepRequest {
  steps: number
  /** Absolute number of steps already taken: keys the noise and places the samples. */
  first_step: number
  seed: number
  /** Take a sample after every step whose absolute number is a multiple of this (0: never). */
  sample_interval: number
  params: StepParams
}

export interface FieldBackend {
  readonly kind: 'gpu' | 'cpu'
  /** Words for people: the adapter or the thread count. */
  readonly description: string
  readonly n: number
  readonly fields: number
  step(req: StepRequest): Promise<LedgerSample[]>
  /** Adds `wave` (n*n) to u and u_prev of one field: a displacement at rest. */
  inject(field: number, wave: Float32Array): Promise<void>
  /** Replaces the state of every field (n*n*fields each). */
  load(u: Float32Array, prev: Float32Array): Promise<void>
  /** Reads back u and u_prev of the fields asked for (all when omitted), n*n each, in field order. */
  read(fields?: number[]): Promise<{ u: Float32Array; prev: Float32Array }>
  /** Energy of each field now (or of the one field asked for); c2 from params. */
  energy(params: StepParams, field?: number): Promise<Float64Array>
  /** Running totals per field, 4 each: bulk, boundary, saturation, noise. */
  ledger(): Promise<Float64Array>
  destroy(): void
}

/** Starts a thread that runs the WASM kernel on shared memory; the Node and browser entries differ. */
export type ThreadSpawner = (init: { module: WebAssembly.Module; memory: WebAssembly.Memory; job: number; go: number; thread: number }) => {
  terminate(): void
}
