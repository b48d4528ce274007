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
