// Recall's sweep behind one interface (AdjointRunner, engine/field/backend.ts): on the CPU the
// AdjointField of adjoint.ts run in place; on the GPU the kernels of shaders/adjoint.wgsl, which
// the backend opens (engine/gpu/adjoint.ts). MemoryReader drives either the same way.
import { CrystalError } from '../errors.js'
import type { AdjointRunner, EditMask, FieldBackend } from '../field/backend.js'
import type { StepParams } from '../field/params.js'
import { AdjointField } from './adjoint.js'

export class CpuAdjointRunner implements AdjointRunner {
  private readonly rows: number[] = []
  private readonly adjoint: AdjointField

  constructor(
    params: StepParams,
    u: Float32Array,
    prev: Float32Array,
    private readonly patterns: readonly Float32Array[],
  ) {
    this.adjoint = AdjointField.ofEnergy(params, u, prev)
  }

  step(): void {
    this.adjoint.step()
  }

  scale(mask: EditMask): void {
    if (!(mask instanceof Float32Array)) throw new CrystalError('bad_argument', 'a device mask can only be replayed on the backend that holds it')
    this.adjoint.scale(mask)
  }

  read(): number {
    const r = this.adjoint.readout()
    for (const w of this.patterns) {
      let s = 0
      for (let i = 0; i < w.length; i++) s += r[i] * w[i]
      this.rows.push(s)
    }
    return this.rows.length / this.patterns.length - 1
  }

  results(): Promise<Float64Array> {
    return Promise.resolve(Float64Array.from(this.rows))
  }

  destroy(): void {}
}

/** The sweep over one field of a backend: its own kernels where it has them, else the CPU twin on the field read back. */
export async function openAdjoint(core: FieldBackend, field: number, params: StepParams, patterns: readonly Float32Array[], readings: number): Promise<AdjointRunner> {
  if (core.adjoint) return core.adjoint(field, params, patterns, readings)
  const { u, prev } = await core.read([field])
  return new CpuAdjointRunner(params, u, prev, patterns)
}
