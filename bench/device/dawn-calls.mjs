// What Dawn's calls cost the calling thread, one kind at a time, on whatever adapter the machine has:
// the host's share of an evolve generation is these calls times their counts (docs/gpu.md, "What a
// generation asks of Dawn"). Run from the project (its node_modules/webgpu), with Dawn's flags as
// arguments, e.g. `node .device/dawn-calls.mjs`; prints one JSON line of microseconds a call, the
// median of five rounds (KINDS=a,b runs those alone). The reads' round trips are not here: they wait
// on the device through the engine's own loop (engine/gpu/wait.node.ts), and a generation has 3.
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'

const { create, globals } = await import(pathToFileURL(join(process.cwd(), 'node_modules/webgpu/index.js')).href)
Object.assign(globalThis, globals)
const adapter = await create(process.argv.slice(2)).requestAdapter({ powerPreference: 'high-performance' })
const device = await adapter.requestDevice()
const pipeline = device.createComputePipeline({
  layout: 'auto',
  compute: {
    module: device.createShaderModule({
      code: `@group(0) @binding(0) var<uniform> p: vec4f;
@group(0) @binding(1) var<storage, read> a: array<f32>;
@group(0) @binding(2) var<storage, read> b: array<f32>;
@group(0) @binding(3) var<storage, read_write> c: array<f32>;
@compute @workgroup_size(64) fn main(@builtin(global_invocation_id) g: vec3u) { c[g.x] = a[g.x] + b[g.x] * p.x; }`,
    }),
    entryPoint: 'main',
  },
})
const uniform = device.createBuffer({ size: 256, usage: GPUBufferUsage.UNIFORM | GPUBufferUsage.COPY_DST })
const storage = [0, 1, 2].map(() => device.createBuffer({ size: 4096, usage: GPUBufferUsage.STORAGE }))
const layout = pipeline.getBindGroupLayout(0)
const entries = [{ binding: 0, resource: { buffer: uniform } }, ...storage.map((buffer, i) => ({ binding: i + 1, resource: { buffer } }))]
const group = device.createBindGroup({ layout, entries })
const data = new Float32Array(4)

/** A submit of one pass of `dispatches` dispatches, each setting the group and (unless `kept`) the pipeline. */
function submit(dispatches, kept = false) {
  const encoder = device.createCommandEncoder()
  const pass = encoder.beginComputePass()
  for (let i = 0; i < dispatches; i++) {
    if (!kept || i === 0) pass.setPipeline(pipeline)
    pass.setBindGroup(0, group)
    pass.dispatchWorkgroups(1)
  }
  pass.end()
  device.queue.submit([encoder.finish()])
}

/** Microseconds a call of `work`, over `count` calls (awaited where it returns a promise). */
async function timed(count, work) {
  const t = performance.now()
  for (let i = 0; i < count; i++) await work()
  return ((performance.now() - t) * 1000) / count
}

const kinds = {
  createBindGroup: () => timed(2000, () => void device.createBindGroup({ layout, entries })),
  // a pass's dispatch beyond the first: setPipeline, setBindGroup, dispatchWorkgroups, and its share of the submit
  dispatch: async () => ((await timed(20, () => submit(101))) - (await timed(20, () => submit(1)))) / 100,
  // the same with the pipeline set once a pass (the field step's since 2026-11-29)
  dispatchKeptPipeline: async () => ((await timed(20, () => submit(101, true))) - (await timed(20, () => submit(1, true)))) / 100,
  submitOfOne: () => timed(500, () => submit(1)),
  writeBuffer16: () => timed(2000, () => device.queue.writeBuffer(uniform, 0, data)),
  createAndDestroyBuffer: () =>
    timed(500, () => device.createBuffer({ size: 65536, usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_DST }).destroy()),
}
const only = process.env.KINDS?.split(',')
const rounds = {}
for (let r = 0; r < 5; r++)
  for (const [kind, run] of Object.entries(kinds)) if (!only || only.includes(kind)) (rounds[kind] ??= []).push(await run())
const median = (v) => v.sort((a, b) => a - b)[v.length >> 1]
const us = Object.fromEntries(Object.entries(rounds).map(([k, v]) => [k, Math.round(median(v) * 10) / 10]))
console.log(JSON.stringify({ adapter: adapter.info.description || adapter.info.vendor, us }))
device.destroy()
process.exit(0)
