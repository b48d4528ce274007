// Recall's sweep behind one interface (AdjointRunner, engine/field/backend.ts): on the CPU the
// AdjointField of adjoint.ts; on the GPU the kernels of shaders/adjoint.wgsl, which the backend
// opens (engine/gpu/adjoint.ts). MemoryReader drives either the same way: the sweep is queued, then run.
import { CrystalError } from '../errors.js'
import { yieldToEventLoop } from '../dream/dream.js'
import { TextWave, type AdjointRunner, type EditMask, type FieldBackend, type KeptPatterns, type PatternWave } from '../field/backend.js'
import type { StepParams } from '../field/params.js'
import { AdjointField, negLaplacian } from './adjoint.js'
import type { PathRequest, SaturationPath } from './path.js'

type Op =
  | { kind: 'step'; t?: number }
  | { kind: 'params'; p: StepParams }
  | { kind: 'scale'; mask: Float32Array }
  | { kind: 'read'; patterns?: readonly number[] }
  | { kind: 'product'; of: number; patterns: readonly number[] }

/** <a, b> summed in float64, in order. */
function dot(a: Float32Array, b: Float32Array): number {
  let s = 0
  for (let i = 0; i < a.length; i++) s += a[i] * b[i]
  return s
}

/** The patterns as host arrays: the CPU twin reads no `TextWave` (only a backend that makes them on its device hands them out). */
export function onHost(patterns: readonly PatternWave[]): Float32Array[] {
  return patterns.map((w) => {
    if (w instanceof TextWave)
      throw new CrystalError('internal', `the pattern of "${w.text}" is on a device; the CPU twin reads host arrays`)
    return w
  })
}

/** Steps run back between two turns of the event loop (a station's stream keeps its timer). */
const STEPS_PER_TURN = 128

export class CpuAdjointRunner implements AdjointRunner {
  private readonly ops: Op[] = []
  private readings = 0

  /** `path`, a saturating field's, gives each step its k. */
  constructor(
    private readonly params: StepParams,
    private readonly u: Float32Array,
    private readonly prev: Float32Array,
    private readonly patterns: readonly Float32Array[],
    private readonly path?: SaturationPath,
  ) {}

  step(t?: number): void {
    this.ops.push({ kind: 'step', t })
  }

  setParams(p: StepParams): void {
    this.ops.push({ kind: 'params', p })
  }

  scale(mask: EditMask): void {
    if (!(mask instanceof Float32Array))
      throw new CrystalError('bad_argument', 'a device mask can only be replayed on the backend that holds it')
    this.ops.push({ kind: 'scale', mask })
  }

  read(patterns?: readonly number[]): number {
    this.ops.push({ kind: 'read', patterns })
    return this.readings++
  }

  product(of: number, patterns: readonly number[]): number {
    this.ops.push({ kind: 'product', of, patterns })
    return this.readings++
  }

  async results(): Promise<Float64Array> {
    const adjoint = AdjointField.ofEnergy(this.params, this.u, this.prev)
    const count = this.patterns.length
    const rows = new Float64Array(this.readings * count)
    let reading = 0
    let steps = 0
    for (const op of this.ops) {
      if (op.kind === 'step') {
        adjoint.step(this.path && op.t !== undefined ? this.path.k[op.t - this.path.from] : undefined)
        if (++steps % STEPS_PER_TURN === 0) await yieldToEventLoop()
      } else if (op.kind === 'params') adjoint.setParams(op.p)
      else if (op.kind === 'scale') adjoint.scale(op.mask)
      else if (op.kind === 'product') {
        const qw = negLaplacian(this.patterns[op.of], this.params.n)
        for (const p of op.patterns) rows[reading * count + p] = dot(this.patterns[p], qw)
        reading++
      } else {
        const r = adjoint.readout()
        for (const p of op.patterns ?? this.patterns.keys()) rows[reading * count + p] = dot(r, this.patterns[p])
        reading++
      }
    }
    return rows
  }

  destroy(): void {}
}

/**
 * The sweep over one field of a backend: its own kernels where it has them (a saturating field's
 * path, `path`, rerun there too), else the CPU twin on the field read back, its path on the host.
 */
export async function openAdjoint(
  core: FieldBackend,
  field: number,
  params: StepParams,
  patterns: readonly PatternWave[],
  readings: number,
  path?: PathRequest,
  kept?: KeptPatterns,
): Promise<AdjointRunner> {
  if (core.adjoint) return core.adjoint(field, params, patterns, readings, path?.plan, kept)
  const { u, prev } = await core.read([field])
  return new CpuAdjointRunner(params, u, prev, onHost(patterns), path && (await path.onHost()))
}
