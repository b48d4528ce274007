// WebGPU in Node through Dawn (`webgpu`). Dawn needs a Vulkan driver; on machines without a GPU the
// one that works is SwiftShader from Debian's chromium package (DESIGN.md section 3), which must be
// named before Dawn loads. An ICD the user names (VK_ICD_FILENAMES, VK_DRIVER_FILES) always wins.
import { existsSync, readdirSync } from 'node:fs'

export const SWIFTSHADER_ICD = '/usr/lib/chromium/vk_swiftshader_icd.json'
const ICD_DIRS = ['/etc/vulkan/icd.d', '/usr/share/vulkan/icd.d', '/usr/local/share/vulkan/icd.d']

/** Installed Vulkan drivers that Dawn accepts (Mesa 22's lavapipe is refused, so it does not count). */
function usableSystemIcds(): string[] {
  return ICD_DIRS.filter(existsSync).flatMap((d) => readdirSync(d).filter((f) => f.endsWith('.json') && !f.startsWith('lvp')))
}

let gpu: Promise<GPU | undefined> | undefined

/** navigator.gpu's Node twin, or undefined when Dawn cannot load. Loaded once per process. */
export function nodeGpu(): Promise<GPU | undefined> {
  gpu ??= (async () => {
    const env = process.env
    if (!env.VK_ICD_FILENAMES && !env.VK_DRIVER_FILES && usableSystemIcds().length === 0 && existsSync(SWIFTSHADER_ICD)) {
      env.VK_ICD_FILENAMES = SWIFTSHADER_ICD
    }
    try {
      const { create, globals } = await import('webgpu')
      Object.assign(globalThis, globals)
      return create([]) as GPU
    } catch {
      return undefined
    }
  })()
  return gpu
}
