// Adapter and device acquisition, the same for navigator.gpu and Dawn's Node binding.
import { CrystalError } from '../errors.js'

export interface AdapterChoice {
  adapter: GPUAdapter
  /** A software rasterizer (SwiftShader, lavapipe): correct, but slower than the CPU backend. */
  software: boolean
  name: string
  /**
   * The adapter offers `subgroups` and the WGSL has the subgroup_id builtins: the field step then sums
   * its tiles' ledger terms with subgroupAdd (shaders/tile_sum_subgroups.wgsl). False keeps it on shared memory.
   */
  subgroups: boolean
}

export async function findAdapter(gpu: GPU | undefined): Promise<AdapterChoice | undefined> {
  if (!gpu) return undefined
  const adapter = await gpu.requestAdapter({ powerPreference: 'high-performance' })
  if (!adapter) return undefined
  const info = adapter.info as GPUAdapterInfo & { isFallbackAdapter?: boolean; adapterType?: string }
  const name = [info.vendor, info.architecture, info.device, info.description].filter(Boolean).join(' ') || 'unnamed adapter'
  const software =
    info.isFallbackAdapter === true ||
    (adapter as GPUAdapter & { isFallbackAdapter?: boolean }).isFallbackAdapter === true ||
    info.adapterType === 'cpu' ||
    /swiftshader|llvmpipe|lavapipe|software/i.test(name)
  // optional chains: an older browser has no wgslLanguageFeatures, and the tests' stand-in adapters no features
  const subgroups = (adapter.features?.has('subgroups') ?? false) && (gpu.wgslLanguageFeatures?.has('subgroup_id') ?? false)
  return { adapter, software, name, subgroups }
}

/** A device with the adapter's largest buffer limits (batched fields are big), and subgroups where the choice has them. */
export async function openDevice(choice: AdapterChoice): Promise<GPUDevice> {
  const { limits } = choice.adapter
  try {
    return await choice.adapter.requestDevice({
      requiredFeatures: choice.subgroups ? ['subgroups' as GPUFeatureName] : [],
      requiredLimits: {
        maxStorageBufferBindingSize: limits.maxStorageBufferBindingSize,
        maxBufferSize: limits.maxBufferSize,
      },
    })
  } catch (e) {
    throw new CrystalError('backend_unavailable', `could not open a WebGPU device on ${choice.name}: ${(e as Error).message}`)
  }
}

/** The adapter found and the device opened on it, shared by every backend that asks for the same features. */
export interface KeptDevice {
  choice: AdapterChoice
  device: GPUDevice
}

const kept = new WeakMap<GPU, Map<boolean, Promise<KeptDevice | undefined>>>()
const described = new WeakMap<GPU, Promise<AdapterChoice | undefined>>()

/**
 * The adapter `gpu` offers, found once a process (requestAdapter took some 5 ms an engine on the
 * H200, and evolve opens two engines a generation): what it is, to choose a backend by. Not for
 * opening a device (an adapter opens one only): keptDevice finds its own.
 */
export function keptAdapter(gpu: GPU): Promise<AdapterChoice | undefined> {
  let found = described.get(gpu)
  if (!found) {
    described.set(gpu, (found = findAdapter(gpu)))
    found.then(
      (a) => a || described.delete(gpu),
      () => described.delete(gpu),
    )
  }
  return found
}

/**
 * One device per WebGPU entry point (navigator.gpu, Dawn's) and feature set, opened once and kept for
 * the process. Dawn compiles a kernel once per device and finds it again when asked for the same one:
 * engines opened one after another on a kept device (evolve's batch each generation, the server's
 * jobs) skip the compiles, which a fresh device repeats every time (8 s an engine on SwiftShader; most
 * of a generation on the H200, docs/gpu.md). Backends free their own buffers and leave the device
 * open. A lost device is forgotten, so the next engine opens a new one. `subgroups: false` keeps the
 * step's tile sums on shared memory (its own device, without the feature). Undefined: no adapter.
 */
export function keptDevice(gpu: GPU, subgroups = true): Promise<KeptDevice | undefined> {
  let byFeatures = kept.get(gpu)
  if (!byFeatures) kept.set(gpu, (byFeatures = new Map()))
  let entry = byFeatures.get(subgroups)
  if (!entry) {
    entry = (async () => {
      const found = await findAdapter(gpu)
      if (!found) return undefined
      const choice = { ...found, subgroups: found.subgroups && subgroups }
      const device = await openDevice(choice)
      void device.lost.then(() => {
        if (byFeatures.get(subgroups) === entry) byFeatures.delete(subgroups)
      })
      return { choice, device }
    })()
    byFeatures.set(subgroups, entry)
    // a failure (no adapter, a refused device) is not kept: the next engine asks again
    const forget = () => void byFeatures.delete(subgroups)
    entry.then((k) => k || forget(), forget)
  }
  return entry
}
