// Whether a process's first compiles go faster asked for all at once. On the H200 the 22 kernels of
// evolve's first generation took 523 ms, one after another as the product then asked for them, where the
// same kernels took 92 ms on a fresh device of the same process (at once 123): the first compiles of a
// process cost most of it, and nobody had asked for those at once. Since 2026-11-29 the product asks for
// them ahead, off the calling thread (engine/gpu/context.ts compileAhead), which `together` is closest to.
// Run from the project (npm run build first) in fresh processes, alternately:
//   node first-compiles.mjs record FILE    a small generation on the product's device, its kernels to FILE
//   node first-compiles.mjs together FILE  a fresh process: FILE's kernels at once (createComputePipelineAsync)
//   node first-compiles.mjs serial FILE    the control: the same one after another (createComputePipeline)
// each printing one JSON line (the wall ms of the compiles, the device's opening apart).
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'

const [mode, file] = process.argv.slice(2)
if (!['record', 'together', 'serial'].includes(mode) || !file) {
  console.error('usage: node first-compiles.mjs record|together|serial FILE')
  process.exit(2)
}
const dist = (path) => import(pathToFileURL(join(process.cwd(), 'dist', path)).href)
const { nodeGpu } = await dist('engine/gpu/webgpu.node.js')
const { findAdapter, keptDevice, openDevice } = await dist('engine/gpu/device.js')
const { compileAll, smallGeneration, watchCompiles } = await dist('bench/open.js')
const gpu = await nodeGpu()
const t0 = performance.now()
if (mode === 'record') {
  const { device } = await keptDevice(gpu)
  const watch = watchCompiles(device, performance.now())
  const ms = await smallGeneration()
  watch.stop()
  writeFileSync(file, JSON.stringify(watch.kernels()))
  const compiles = watch.compiles.reduce((s, c) => s + c.ms, 0)
  console.log(JSON.stringify({ mode, kernels: watch.kernels().length, compile_ms: Math.round(compiles), generation_ms: Math.round(ms) }))
} else {
  const kernels = JSON.parse(readFileSync(file, 'utf8'))
  const device = await openDevice(await findAdapter(gpu))
  const open_ms = performance.now() - t0
  const ms = await compileAll(device, kernels, mode === 'together')
  console.log(JSON.stringify({ mode, kernels: kernels.length, open_ms: Math.round(open_ms), compile_ms: Math.round(ms) }))
}
process.exit(0)
