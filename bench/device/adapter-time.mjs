// What opening WebGPU costs a fresh process, step by step, on the device machine: Dawn's instance
// (create), the adapter (the call itself, which blocks the thread, and its answer), the device, and
// the first and second compute pipelines. Run from the project (its node_modules/webgpu), with Dawn's
// flags as arguments, e.g. `node .device/adapter-time.mjs backend=vulkan`; prints one JSON line.
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'

const flags = process.argv.slice(2)
const ms = (t) => Math.round((performance.now() - t) * 10) / 10
let t = performance.now()
const { create, globals } = await import(pathToFileURL(join(process.cwd(), 'node_modules/webgpu/index.js')).href)
Object.assign(globalThis, globals)
const times = { import: ms(t) }
t = performance.now()
const gpu = create(flags)
times.create = ms(t)
t = performance.now()
const asked = gpu.requestAdapter({ powerPreference: 'high-performance' })
times.requestAdapterCall = ms(t)
const adapter = await asked
times.requestAdapter = ms(t)
t = performance.now()
const device = await adapter.requestDevice()
times.requestDevice = ms(t)
const kernel = (k) => `@group(0) @binding(0) var<storage, read_write> a: array<f32>;
@compute @workgroup_size(64) fn main(@builtin(global_invocation_id) g: vec3u) { a[g.x] = a[g.x] * ${k}.0 + 1.0; }`
for (const which of ['firstPipeline', 'secondPipeline']) {
  t = performance.now()
  device.createComputePipeline({
    layout: 'auto',
    compute: { module: device.createShaderModule({ code: kernel(which.length) }), entryPoint: 'main' },
  })
  times[which] = ms(t)
}
// the buffer limits the engine requests whole (engine/gpu/device.ts): they bound a batch's fields (docs/discovery.md)
const { maxBufferSize, maxStorageBufferBindingSize } = adapter.limits
console.log(
  JSON.stringify({ flags, adapter: adapter.info.description || adapter.info.vendor, ...times, maxBufferSize, maxStorageBufferBindingSize }),
)
device.destroy()
process.exit(0)
