// Kernels compiled ahead (context.ts compileAhead): off the calling thread, waited for where they are
// used and not compiled again, a first generation's all of them; one that fails compiles again where it
// is used, whose error is reported as before. On this machine's real WebGPU, whatever its adapter is.
import { afterAll, describe, expect, test } from 'vitest'
import { watchCompiles } from '../../testing/backends.js'
import { evaluate } from '../discovery/evaluate.js'
import { randomGenome } from '../discovery/genome.js'
import { MaterialCatalog } from '../field/materials.js'
import { createNodeEngine } from '../node.js'
import { rng } from '../util/rng.js'
import { GpuFieldBackend } from './backend.js'
import { compileAhead, compiling, forgetKernels, type Kernel, madeOn, pipelineOf } from './context.js'
import { findAdapter, keptDevice, openDevice } from './device.js'
import { RECORD_KERNELS } from './record.js'
import { nodeGpu } from './webgpu.node.js'

const opened: GPUDevice[] = []
afterAll(() => {
  for (const d of opened) d.destroy()
})

/** A device of its own, so that nothing compiled before is found again. */
async function freshDevice(): Promise<GPUDevice> {
  const device = await openDevice((await findAdapter(await nodeGpu()))!)
  opened.push(device)
  return device
}

/** `work`'s wall ms and the longest the calling thread went without a turn of a 1 ms timer meanwhile. */
async function turns(work: () => unknown): Promise<{ ms: number; longestGap: number }> {
  let last = performance.now()
  let longestGap = 0
  const timer = setInterval(() => {
    const now = performance.now()
    longestGap = Math.max(longestGap, now - last)
    last = now
  }, 1)
  const start = performance.now()
  await work()
  const ms = performance.now() - start
  // the gap the work ends in counts too
  await new Promise((r) => setTimeout(r, 5))
  clearInterval(timer)
  return { ms, longestGap }
}

describe('kernels compiled ahead', () => {
  test('compile off the calling thread, where a compile asked for at its use holds it (the control)', async () => {
    // the basin's kernel: some 0.5 s of SwiftShader's compiler
    const kernel = RECORD_KERNELS.basin
    const ahead = await freshDevice()
    const sync: string[] = []
    watchCompiles(ahead, (d, isAhead) => void (isAhead || sync.push(d.compute.entryPoint ?? '')))
    const off = await turns(() => {
      compileAhead(ahead, [kernel])
      return compiling(ahead, [kernel])
    })
    expect(madeOn(ahead, kernel.key)).toBeDefined()
    expect(pipelineOf(ahead, kernel)).toBe(madeOn(ahead, kernel.key))
    expect(sync).toEqual([])
    const control = await freshDevice()
    const on = await turns(() => pipelineOf(control, kernel))
    // the control holds the thread for the whole compile; ahead, the thread turns meanwhile (where a
    // compile is long enough to tell: a GPU's take some 10 to 50 ms, of a timer's jitter)
    expect(on.longestGap).toBeGreaterThan(0.8 * on.ms)
    if (on.ms > 100) expect(off.longestGap).toBeLessThan(0.5 * on.ms)
  }, 60_000)

  test('one forgotten while it compiles is not kept; one that fails is compiled again where used, which reports its error', async () => {
    const device = await freshDevice()
    const kernel = RECORD_KERNELS.gather
    compileAhead(device, [kernel])
    const wait = compiling(device, [kernel])
    expect(wait).toBeDefined()
    // asked again while it compiles: not asked twice
    let asked = 0
    const stop = watchCompiles(device, () => asked++)
    compileAhead(device, [kernel])
    stop()
    expect(asked).toBe(0)
    forgetKernels(device)
    await wait
    expect(madeOn(device, kernel.key)).toBeUndefined()
    expect(compiling(device, [kernel])).toBeUndefined()

    const broken: Kernel = {
      key: 'broken',
      describe: (d) => ({ ...kernel.describe(d), compute: { ...kernel.describe(d).compute, entryPoint: 'nope' } }),
    }
    compileAhead(device, [broken])
    await compiling(device, [broken])
    expect(madeOn(device, broken.key)).toBeUndefined()
    device.pushErrorScope('validation')
    pipelineOf(device, broken)
    const error = await device.popErrorScope()
    expect(error?.message).toMatch(/nope/)
  }, 60_000)

  test("a backend whose step's module fails reports the module's own error, not its pipelines' after it", async () => {
    const device = await freshDevice()
    const create = device.createShaderModule
    // the field step's module made invalid: a stray token after its code
    device.createShaderModule = (d) => create.call(device, d.code.includes('fn step(') ? { ...d, code: `${d.code}\nnot_wgsl` } : d)
    const opening = GpuFieldBackend.create(device, 32, 1, 'this adapter', { sampling: false })
    await expect(opening).rejects.toThrow(/could not be set up on this adapter/)
    const message = await opening.catch((e: Error) => e.message)
    expect(message).toMatch(/not_wgsl/)
    expect(message).not.toMatch(/Invalid ShaderModule/i)
  }, 60_000)

  test("an engine asked ahead for its states, writes, recalls and dreams (the server's) compiles none of their kernels on the calling thread", async () => {
    const { device } = (await keptDevice(await nodeGpu()))!
    forgetKernels(device)
    const sync: string[] = []
    const stop = watchCompiles(device, (d, ahead) => void (ahead || sync.push(`${d.compute.entryPoint}`)))
    try {
      const engine = await createNodeEngine({ backend: 'gpu', size: 32, material: new MaterialCatalog().get('ideal_resonator'), seed: 1 })
      engine.compileAhead(['show', 'write', 'recall', 'dream', 'report'])
      expect(await engine.downsampled(16)).toHaveLength(256)
      await engine.write('the first memory', 1)
      await engine.write('a second memory', 1)
      expect((await engine.recall('the first memory', 2)).memories).toBe(2)
      expect(await engine.dream('light')).toHaveLength(1)
      engine.destroy()
    } finally {
      stop()
    }
    expect(sync).toEqual([])
  }, 120_000)

  test('a generation on the GPU backend compiles every kernel ahead, each once: none on the calling thread', async () => {
    const { device } = (await keptDevice(await nodeGpu()))!
    // the kernels made so far are forgotten, so this generation compiles them all again, under the count
    forgetKernels(device)
    const compiles: { entry: string; ahead: boolean }[] = []
    const stop = watchCompiles(device, (d, ahead) => compiles.push({ entry: `${d.compute.entryPoint}`, ahead }))
    try {
      const rand = rng(5)
      const genomes = Array.from({ length: 2 }, () => randomGenome(rand, { min_steps: 100, max_steps: 100 }))
      const conditions = { size: 32, material: new MaterialCatalog().get('europium_crystal'), seed: 1 }
      await evaluate(genomes, { ...conditions, open: (o) => createNodeEngine({ ...o, backend: 'gpu' }) })
    } finally {
      stop()
    }
    expect(compiles.filter((c) => !c.ahead)).toEqual([])
    const entries = compiles.map((c) => c.entry)
    for (const entry of ['step', 'inject', 'accumulate', 'gather', 'power_sums', 'mode_planes', 'kick', 'basin'])
      expect(entries).toContain(entry)
    // the dream's accumulate and the frames' are two kernels of one name
    expect(entries.filter((e) => e === 'accumulate')).toHaveLength(2)
    expect(entries.filter((e) => e !== 'accumulate').length).toBe(new Set(entries).size - 1)
  }, 120_000)
})
