// Backend choice (DESIGN.md section 3): `auto` takes a hardware WebGPU adapter when there is one;
// with only a software adapter, or none, the CPU backend, which is faster on a CPU. The reason is
// kept so that the caller can report it once. It sits above engine/cpu and engine/gpu, which it
// wires, not in engine/field, which they build on.
import { WasmFieldBackend } from '../cpu/wasm.js'
import { CrystalError, isCrystalError } from '../errors.js'
import { GpuFieldBackend } from '../gpu/backend.js'
import { keptAdapter, keptDevice } from '../gpu/device.js'
import type { BackendChoice, FieldBackend, ThreadSpawner } from '../field/backend.js'

export interface BackendOptions {
  backend: BackendChoice
  n: number
  fields: number
  /** navigator.gpu, or Dawn's in Node; absent (or undefined, or a CrystalError saying why) where there is no WebGPU. */
  gpu?: () => Promise<GPU | undefined>
  /** false keeps the GPU step's tile sums on shared memory where the adapter offers subgroups (default: use them). */
  subgroups?: boolean
  /** false: the engine samples no timeline, so the GPU compiles the step without a sample's energy (default true). */
  sampling?: boolean
  /** The GPU step's steps a dispatch where no timeline is sampled (EngineOptions.gpu_steps_per_dispatch). */
  stepsPerDispatch?: number
  /** CPU threads (1 unless a spawner is given). */
  threads?: number
  spawnThread?: ThreadSpawner
}

export interface SelectedBackend {
  backend: FieldBackend
  reason: string
}

export async function selectBackend(o: BackendOptions): Promise<SelectedBackend> {
  const cpu = (reason: string): SelectedBackend => {
    const threads = o.spawnThread ? Math.max(1, o.threads ?? 1) : 1
    const backend = new WasmFieldBackend(o.n, o.fields, threads, o.spawnThread)
    return { backend, reason: `${reason} (${backend.description})` }
  }
  if (o.backend === 'cpu') return cpu('cpu backend: asked for')
  let gpu: GPU | undefined
  try {
    gpu = await o.gpu?.()
  } catch (e) {
    // no WebGPU here, and the getter says why (Node without the optional webgpu package, Dawn failing)
    if (o.backend === 'gpu' || !isCrystalError(e)) throw e
    return cpu(`cpu backend: ${e.message}`)
  }
  const choice = gpu && (await keptAdapter(gpu))
  // the device (and so every kernel compiled on it) is kept for the next engine: engine/gpu/device.ts
  const open = async () => {
    const kept = await keptDevice(gpu!, o.subgroups !== false)
    if (!kept) throw new CrystalError('backend_unavailable', 'the WebGPU adapter went away')
    // one step a dispatch unless asked, on any adapter: on the H200 4 did not pay (the defaults' evolve
    // 1.58 to 1.60 s at 4, 1.54 to 1.79 s at 1; docs/gpu.md, "On the H200 a seventh time")
    return GpuFieldBackend.create(kept.device, o.n, o.fields, kept.choice.name, {
      sampling: o.sampling,
      stepsPerDispatch: o.stepsPerDispatch,
    })
  }
  if (o.backend === 'gpu') {
    if (!choice)
      throw new CrystalError(
        'backend_unavailable',
        'no WebGPU adapter was found',
        {},
        "install a Vulkan driver (or Debian's chromium for SwiftShader), or use --backend cpu",
      )
    return { backend: await open(), reason: `gpu backend: asked for (${choice.name}${choice.software ? ', software' : ''})` }
  }
  if (!choice) return cpu('cpu backend: no WebGPU adapter')
  if (choice.software) return cpu(`cpu backend: the only WebGPU adapter is a software one (${choice.name}), slower than the CPU`)
  return { backend: await open(), reason: `gpu backend: hardware adapter ${choice.name}` }
}
