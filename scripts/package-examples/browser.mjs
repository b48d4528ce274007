// Example of the engine in a browser: bundled for the `browser` condition (the root entry resolves to
// the browser build), it runs in a page on the CPU (WebAssembly) and on WebGPU, and reports both.
import { createEngine } from 'resonant-crystal'
import { SUBJECTS } from 'resonant-crystal/contracts'

async function run(backend) {
  const engine = await createEngine({ backend, gpu: async () => navigator.gpu, size: 32, material: 'ideal_resonator', seed: 3 })
  await engine.write('cold glyph', 0.9)
  await engine.step(50)
  const [books] = await engine.books()
  engine.destroy()
  return { backend: engine.backend, energy: books.energy }
}

globalThis.example = (async () => ({ cpu: await run('cpu'), gpu: await run('gpu'), subjects: Object.keys(SUBJECTS).length }))()
