// WebGPU in Node through Dawn (`webgpu`). Dawn needs a Vulkan driver; on machines without a GPU the
// one that works is SwiftShader from Debian's chromium package (DESIGN.md section 3), which must be
// named before Dawn loads. An ICD the user names (VK_ICD_FILENAMES, VK_DRIVER_FILES) always wins.
import { existsSync, readdirSync } from 'node:fs'
import { CrystalError } from '../errors.js'
import { importOptional } from '../util/optional.node.js'
import { throttleDawnPolls } from './wait.node.js'

export const SWIFTSHADER_ICD = '/usr/lib/chromium/vk_swiftshader_icd.json'
const ICD_DIRS = ['/etc/vulkan/icd.d', '/usr/share/vulkan/icd.d', '/usr/local/share/vulkan/icd.d']

/** Installed Vulkan drivers that Dawn accepts (Mesa 22's lavapipe is refused, so it does not count). */
function usableSystemIcds(): string[] {
  return ICD_DIRS.filter(existsSync).flatMap((d) => readdirSync(d).filter((f) => f.endsWith('.json') && !f.startsWith('lvp')))
}

let gpu: Promise<GPU> | undefined

/**
 * navigator.gpu's Node twin, loaded once per process. Rejects, saying why, when the optional package
 * `webgpu` is not installed or Dawn cannot load (`auto` then takes the CPU backend and reports why).
 */
export function nodeGpu(): Promise<GPU> {
  gpu ??= (async () => {
    const env = process.env
    if (!env.VK_ICD_FILENAMES && !env.VK_DRIVER_FILES && usableSystemIcds().length === 0 && existsSync(SWIFTSHADER_ICD)) {
      env.VK_ICD_FILENAMES = SWIFTSHADER_ICD
    }
    const { create, globals } = await importOptional<typeof import('webgpu')>('webgpu', 'the GPU backend in Node', 'use --backend cpu')
    try {
      Object.assign(globalThis, globals)
      throttleDawnPolls()
      return create([]) as GPU
    } catch (e) {
      throw new CrystalError(
        'backend_unavailable',
        `webgpu could not start Dawn: ${(e as Error).message}`,
        {},
        "install a Vulkan driver (or Debian's chromium for SwiftShader), or use --backend cpu",
      )
    }
  })()
  return gpu
}
