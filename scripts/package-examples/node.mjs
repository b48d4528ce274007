// Example of the main entry in Node (`resonant-crystal`): a field written, stepped and asked, and a
// material catalog from files. scripts/pack.test.ts runs it from an installed tarball.
import { createNodeEngine, loadCatalog } from 'resonant-crystal'

const catalog = loadCatalog(undefined)
const engine = await createNodeEngine({ backend: 'cpu', size: 64, material: 'ideal_resonator', seed: 7, materials: catalog })
await engine.write('cold glyph', 0.9)
await engine.step(100)
const [books] = await engine.books()
const { hits } = await engine.recall('glyph', 1)
engine.destroy()
console.log(
  JSON.stringify({
    backend: engine.backend,
    step: books.step,
    energy: books.energy,
    top: hits[0]?.text ?? null,
    materials: catalog.list().length,
  }),
)
