// The tally of GPU engines' transfers (`crystal --debug`, `crystal --debug serve`): summed a shape at
// a time, each engine once, whether it is read while open, after it is destroyed, or both.
import { afterAll, expect, test } from 'vitest'
import { engineOn } from '../../testing/backends.js'
import type { Engine } from './engine.js'
import { TransferTally } from './transfer_tally.js'

const open: Engine[] = []
afterAll(() => open.forEach((e) => e.destroy()))

test('two GPU engines of one shape make one line with their sums, a third shape its own; a CPU engine none; an engine read while open, working on, then destroyed is counted once, as it stood last', async () => {
  const tally = new TransferTally()
  const engines = await Promise.all(
    [16, 16, 24].map((size) => engineOn('gpu', { size, material: 'vacuum', timeline_interval: 0 }).then((e) => tally.track(e))),
  )
  const cpu = tally.track(await engineOn('cpu', { size: 16 }))
  open.push(...engines, cpu)
  for (const [k, e] of engines.entries()) {
    await e.write(`memory ${k}`)
    await e.step(10 * (k + 1))
  }
  await cpu.step(10)
  const sum = (es: Engine[]) => es.reduce((total, e) => total + e.transfers()!.dispatches, 0)
  const whileOpen = tally.lines()
  expect(whileOpen).toHaveLength(2)
  expect(whileOpen[0]).toMatch(
    new RegExp(
      `^gpu transfers \\(N = 16, 1 field, 2 engines\\): read back [\\d,]+ bytes in \\d+ reads, wrote [\\d,]+ bytes in \\d+ writes, ${sum(engines.slice(0, 2)).toLocaleString('en-US')} dispatches in \\d+ submits$`,
    ),
  )
  expect(whileOpen[1]).toMatch(
    new RegExp(`^gpu transfers \\(N = 24, 1 field\\): .* ${sum(engines.slice(2)).toLocaleString('en-US')} dispatches in`),
  )
  // read again, nothing added: the same lines; an engine that works on after a reading shows it in the next
  expect(tally.lines()).toEqual(whileOpen)
  await engines[2].step(5)
  const later = tally.lines()
  expect(later[0]).toBe(whileOpen[0])
  expect(later[1]).toMatch(new RegExp(` ${sum(engines.slice(2)).toLocaleString('en-US')} dispatches in`))
  expect(later[1]).not.toBe(whileOpen[1])
  // the total, the shapes summed: every GPU engine's counts, the CPU engine's none
  const total = tally.total()!
  expect(total.dispatches).toBe(sum(engines))
  expect(total.reads).toBe(engines.reduce((all, e) => all + e.transfers()!.reads, 0))
  // destroyed, each engine is booked once, as it stood
  for (const e of [...engines, cpu]) e.destroy()
  open.length = 0
  expect(tally.lines()).toEqual(later)
  expect(tally.total()).toEqual(total)
  // a tally of CPU engines alone moved nothing: no total
  const cpuOnly = new TransferTally()
  cpuOnly.track(await engineOn('cpu', { size: 16 })).destroy()
  expect(cpuOnly.total()).toBeUndefined()
})

test("the engines made from a tracked one (a batch extracted, a fork) are counted in its line, each once: evolve's perturbation reads in such a batch", async () => {
  const tally = new TransferTally()
  const e = tally.track(await engineOn('gpu', { size: 16, fields: 3, material: 'vacuum', timeline_interval: 0, recall_history: false }))
  open.push(e)
  await e.step(5)
  const [part, fork] = [await e.extract([2, 0]), await e.fork(1)]
  for (const made of [part, fork]) {
    await made.step(5)
    await made.books()
  }
  const counts = [e, part, fork].map((x) => x.transfers()!)
  expect(counts[1].reads * counts[2].reads).toBeGreaterThan(0)
  const reads = counts.reduce((sum, t) => sum + t.reads, 0)
  const lines = tally.lines()
  expect(lines).toEqual([
    expect.stringMatching(
      new RegExp(`^gpu transfers \\(N = 16, 3 fields, 2 more made from it\\): read back [\\d,]+ bytes in ${reads} reads`),
    ),
  ])
  // destroyed, each is booked once, as it stood
  part.destroy()
  fork.destroy()
  expect(tally.lines()).toEqual(lines)
})
