// The perturbation planned from each part's sums where the fields live (shaders/erase.wgsl): the
// erasure (`erase_planned`, bound by engine/gpu/inject.ts encodeErase) and the regrowth's sums over the
// disc (`regrowth`, by engine/gpu/record.ts perturbationSums). CPU twins: erasePlan
// (engine/detect/erase_plan.ts) and regrowthSums (engine/detect/regrowth.ts); tests:
// engine/gpu/kick.test.ts, engine/gpu/basin.test.ts.
import type { PlannedErasure } from '../detect/erase_plan.js'
import { OFFSET_BITS } from '../detect/placement.js'
import { packStruct, wgslStruct } from '../field/params.js'
import { type Kernel, kernelModule, perDevice } from './context.js'
import { SHADERS } from './shaders.gen.js'

/** shaders/erase.wgsl's uniform: the fields' side, cells a field. */
const ERASE_LAYOUT = [
  ['n', 'u32'],
  ['cells', 'u32'],
] as const
/** The words of a plan (shaders/erase.wgsl): its field, its part's cells, then Sx, Sy, Sxx, Syy, Sxy and the radii, two words each. */
const ERASE_WORDS = 14

const eraseModule = (device: GPUDevice) =>
  perDevice(device, 'erase:module', () => {
    const header = `${wgslStruct('Erase', ERASE_LAYOUT)}const ERASE_WORDS: u32 = ${ERASE_WORDS}u;\nconst OFFSET_BITS: u32 = ${OFFSET_BITS}u;\n`
    return kernelModule(device, header, SHADERS.erase, SHADERS.integers + SHADERS.lanes)
  })
const eraseKernel = (entry: 'erase_planned' | 'regrowth'): Kernel => ({
  key: `erase:${entry}`,
  describe: (device) => ({ layout: 'auto', compute: { module: eraseModule(device), entryPoint: entry } }),
})

/** The kernels (context.ts Kernel), made once a device: the erasure, the regrowth's sums. */
export const ERASE_KERNELS = { erase: eraseKernel('erase_planned'), regrowth: eraseKernel('regrowth') } satisfies Record<string, Kernel>

/** The uniform's bytes for fields of side n (16: a uniform binding's least). */
export function eraseUniform(n: number): ArrayBuffer {
  const bytes = new ArrayBuffer(16)
  packStruct(ERASE_LAYOUT, { n, cells: n * n }, bytes)
  return bytes
}

/** The plans as shaders/erase.wgsl reads them, ERASE_WORDS each (the sums are whole numbers under 2^53: two words). */
export function planWords(plans: readonly PlannedErasure[]): Uint32Array {
  const words = new Uint32Array(plans.length * ERASE_WORDS)
  plans.forEach(({ field, sums: s }, k) => {
    const at = k * ERASE_WORDS
    words[at] = field
    words[at + 1] = s.cells
    for (const [j, v] of [s.sx, s.sy, s.sxx, s.syy, s.sxy, s.radii].entries()) {
      words[at + 2 + 2 * j] = v % 2 ** 32
      words[at + 3 + 2 * j] = Math.floor(v / 2 ** 32)
    }
  })
  return words
}
