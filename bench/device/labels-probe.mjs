// What detection on the device would take off the host (docs/detection.md, "What one read a generation
// would take", items 1 and 2): on the device machine, from the unpacked project,
//   node bench/device/labels-probe.mjs [MATERIAL]
// times, on real windows (bench/discovery.ts detectionCost), one thread's detection work a window
// (naming the cells, finding the structure, and of the first the components ranked by mass), and
// shaders/components.wgsl labelling and ranking 2,000 maps at N = 96 on the adapter in one call (its
// upload, kernels and read), and again with each listed component's shape, the map's total and the
// later window's sums over each component summed (item 2), and again with where the first parts' reads
// fall and their lists and regions made (item 3: places, lists, regions), checking each list, shape and place against the
// host's twins. One JSON line.
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'

const material = process.argv[2] ?? 'europium_crystal'
const load = (p) => import(pathToFileURL(join(process.cwd(), 'dist', p)).href)
const { detectionCost } = await load('bench/discovery.js')
const { selectBackend } = await load('engine/backends/select.js')
const { findAdapter } = await load('engine/gpu/device.js')
const { nodeGpu } = await load('engine/gpu/webgpu.node.js')

const adapter = await findAdapter(await nodeGpu())
if (!adapter) throw new Error('no WebGPU adapter')
const { backend } = await selectBackend({ backend: 'gpu', n: 96, fields: 1, gpu: nodeGpu })
try {
  console.log(JSON.stringify(await detectionCost(material, { adapter: adapter.name, software: adapter.software, backend })))
} finally {
  backend.destroy()
}
