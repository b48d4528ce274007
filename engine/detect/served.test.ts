// ServedSpectra against the planes themselves: given what the device reads of a window's first parts
// (here their CPU twins, topSums and topModes, which engine/gpu/components.test.ts ties to the kernels),
// it answers every power sum and mode plane detection reads of those parts as the planes do, bit for
// bit, and asks its source for none of them; and the perturbation planned from them.
import { afterAll, expect, test } from 'vitest'
import { pulsedEngine } from '../../testing/backends.js'
import { randomGenomeWindows } from '../../bench/discovery.js'
import { RECORD_DT, RECORD_FRAMES, recordWindows } from '../discovery/evaluate.js'
import { heldOf } from '../discovery/practice.js'
import type { Engine } from '../field/engine.js'
import { MaterialCatalog } from '../field/materials.js'
import { cellsRead, detect, halves, listedTop, rankedComponents, topLists, topModes, topSums } from './detect.js'
import { measureDynamics, reachSample, sample, strongestBin } from './dynamics.js'
import { modalSamples } from './modal.js'
import { circleCells, placementOf, reachBox, signatureWindow } from './placement.js'
import { ServedSpectra } from './served.js'
import { HeldPlanes, WindowSpectra } from './spectra.js'

const N = 32
const FIELDS = 8
const opened: Engine[] = []
afterAll(() => opened.forEach((e) => e.destroy()))

const bits = (a: ArrayLike<number>) => new Uint32Array(Float32Array.from(a).buffer)

test("a window's first parts' lists and cells at their mode, served from what the device read of them: the planes' answers, bit for bit, and nothing asked of the planes", async () => {
  const engine = await pulsedEngine('cpu', N, FIELDS)
  opened.push(engine)
  const { windows } = await recordWindows(engine, 1)
  const kinds = new Set<string>()
  let checked = 0
  for (const { spectra: spec, later } of windows) {
    const map = spec.stability()
    const top = listedTop(map, N, later)
    if (!top) continue
    const lists = topLists(map, N, top)!
    const [sums, modes] = [topSums(spec, top, lists), topModes(spec, top, lists)]
    const ranked = rankedComponents(map, N)
    // a source that holds the stability alone: whatever is not served throws
    const bare = new WindowSpectra(N, RECORD_DT, RECORD_FRAMES, {
      plane: (p, cell) => {
        if (p === 1) return spec.source.plane(1, cell)
        throw new Error(`plane ${p} of cell ${cell} asked of the planes`)
      },
    })
    const served = new ServedSpectra(bare)
    for (const [k, part] of top.parts.entries()) {
      const { regions } = lists[k]
      kinds.add(Array.isArray(regions) ? 'halved' : regions)
      // a part paired with one past the first is not served (engine/detect/detect.ts readsOf)
      if (regions === 'past') continue
      const cells = ranked[k].cells
      const place = placementOf(N, part.shape)
      const pair: [number[], number[]] | undefined = Array.isArray(regions)
        ? halves(cells, N)
        : regions === 'next'
          ? [cells, ranked[k + 1].cells]
          : undefined
      const reach = reachSample(cells, N, reachBox(place))
      const modal = modalSamples(N, signatureWindow(place))
      served.serve({
        cells,
        place,
        regions: () => pair,
        reach: () => reach,
        modal: () => modal,
        reads: {
          own: { sums: sums[k], modes: modes[k] },
          halves: Array.isArray(regions),
          ...(regions === 'next' && { next: { sums: sums[k + 1], modes: modes[k + 1] } }),
        },
      })
      // the lists as detection makes them anew (served by their cells, not by the arrays served)
      const { cells: blockCells, ends } = modalSamples(N, signatureWindow(place))
      const blocks = Array.from(ends, (end, b) => blockCells.subarray(b ? ends[b - 1] : 0, end)).filter((b) => b.length)
      for (const list of [sample(cells), [...reach], ...(pair ?? []).map(sample), ...blocks])
        expect(bits(served.spec.powerSums(list))).toEqual(bits(spec.powerSums(list)))
      const mode = { cells: reachSample(cells, N, reachBox(place)), bin: strongestBin(spec.powerSums(reach), spec).bin }
      for (const cell of [...sample(cells), ...circleCells(place, 10), ...circleCells(place, 7)])
        if (cell >= 0) expect(served.spec.amplitudeAt(cell, mode)).toEqual(spec.amplitudeAt(cell, mode))
      // and so the part's dynamics
      const dynamics = (s: WindowSpectra) => measureDynamics(s, cells, 1, place, pair).features
      expect(dynamics(served.spec)).toEqual(dynamics(spec))
      // another bin is another mode: not served
      expect(() => served.spec.amplitudeAt(sample(cells)[0], { ...mode, bin: mode.bin === 1 ? 2 : 1 })).toThrow('asked of the planes')
      checked++
    }
  }
  expect(checked).toBeGreaterThan(FIELDS)
  // parts halved and parts paired with the next among them
  expect([...kinds]).toEqual(expect.arrayContaining(['halved', 'next']))
})

test('where the device read the first parts whole, the part planned for the perturbation is the structure detection finds in every window; the control, nothing read with the windows, plans one it does not', async () => {
  const size = 64
  const count = 16
  const windows = await randomGenomeWindows(new MaterialCatalog().get('europium_crystal'), size, count, 3)
  // the clean fields', held as the GPU backend holds them (practice.ts heldOf), with and without the first parts' reads
  const misplanned = async (served: boolean) => {
    let wrong = 0
    for (const w of windows.slice(0, count)) {
      const held = await heldOf(w, 1)
      if (!served) for (const part of held.top?.parts ?? []) delete part.reads
      const { planned } = cellsRead(new WindowSpectra(size, RECORD_DT, RECORD_FRAMES, HeldPlanes.of(held)), w.later, 1)
      const [found] = await detect(w.spectra, w.later, 1)
      if (found ? !(planned && found.cells.includes(planned.cell)) : planned) wrong++
    }
    return wrong
  }
  expect(await misplanned(true)).toBe(0)
  expect(await misplanned(false)).toBeGreaterThan(0)
})
