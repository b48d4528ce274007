// Read-backs through the staging buffers a device keeps (transfers.ts keptOf): a mappable
// buffer is made once for reads of about one size, whichever engine's Transfers reads, and every read
// still brings back the data of its own moment; an engine's buffers given back are taken again at
// exactly their size, zero-filled. On this machine's real WebGPU, whatever its adapter is.
import { expect, test } from 'vitest'
import { keptDevice } from './device.js'
import { DEFERRED_MAX, Transfers } from './transfers.js'
import { nodeGpu } from './webgpu.node.js'

const MAP_READ = 0x1
const STORAGE = 0x80 | 0x4 | 0x8
const FLOATS = 1 << 16

/** The device with its mappable buffers counted, a source buffer and a read of `floats` of it filled with `value`. */
async function counted() {
  const { device } = (await keptDevice(await nodeGpu()))!
  const made: number[] = []
  const create = device.createBuffer
  device.createBuffer = (d: GPUBufferDescriptor) => {
    if (d.usage & MAP_READ) made.push(d.size)
    return create.call(device, d)
  }
  const src = device.createBuffer({ size: FLOATS * 4, usage: STORAGE })
  const read = async (t: Transfers, value: number, floats: number) => {
    t.write(src, 0, new Float32Array(FLOATS).fill(value))
    return new Float32Array(await t.read(src, 0, floats * 4, device.createCommandEncoder(), () => undefined))
  }
  const done = () => {
    device.createBuffer = create
    src.destroy()
  }
  return { device, made, read, done }
}
const filled = (value: number, floats: number) => new Float32Array(floats).fill(value)

test('reads of about one size share one staging buffer across the Transfers of a device, each with its own data', async () => {
  const { device, made, read, done } = await counted()
  try {
    // two engines' counters on one device, one after the other
    const [a, b] = [new Transfers(device), new Transfers(device)]
    expect(await read(a, 1, FLOATS)).toEqual(filled(1, FLOATS))
    expect(await read(b, 2, FLOATS)).toEqual(filled(2, FLOATS))
    // a smaller read within half of it takes the same buffer, and only its own bytes come back
    expect(await read(a, 3, (3 * FLOATS) / 4)).toEqual(filled(3, (3 * FLOATS) / 4))
    expect(made).toHaveLength(1)
    expect(made[0]).toBeGreaterThanOrEqual(FLOATS * 4)
    // one under half its size gets its own; two reads at once take two
    expect(await read(b, 4, FLOATS / 4)).toEqual(filled(4, FLOATS / 4))
    expect(made).toHaveLength(2)
    const both = await Promise.all([read(a, 5, FLOATS), read(b, 5, FLOATS)])
    expect(both).toEqual([filled(5, FLOATS), filled(5, FLOATS)])
    expect(made).toHaveLength(3)
    // small reads share a small buffer, whatever their sizes
    for (const floats of [2, 60, 2]) expect(await read(a, 6, floats)).toEqual(filled(6, floats))
    expect(made).toHaveLength(4)
    expect([a.reads, b.reads]).toEqual([6, 3])
  } finally {
    done()
  }
})

test('a dozen reads at once, read again, make no staging buffer the second time (an evolve generation reads some 12)', async () => {
  const { device, made, read, done } = await counted()
  try {
    const t = new Transfers(device)
    const round = (value: number) => Promise.all(Array.from({ length: 12 }, (_, k) => read(t, value, FLOATS - 1000 * k)))
    await round(1)
    const first = made.length
    const again = await round(2)
    again.forEach((got, k) => expect(got).toEqual(filled(2, FLOATS - 1000 * k)))
    // all twelve were kept (at most 8 kept, 4 would be made again)
    expect(made).toHaveLength(first)
  } finally {
    done()
  }
})

test("an engine's buffers given back are taken again at exactly their size, zero-filled as a new one is", async () => {
  const { device } = (await keptDevice(await nodeGpu()))!
  const t = new Transfers(device)
  const made: number[] = []
  const create = device.createBuffer
  device.createBuffer = (d: GPUBufferDescriptor) => {
    if (!(d.usage & MAP_READ)) made.push(d.size)
    return create.call(device, d)
  }
  try {
    const first = t.buffer(FLOATS * 4, STORAGE)
    t.write(first, 0, filled(7, FLOATS))
    t.keep(first)
    // the same size again: the same buffer, cleared on the queue before anything after reads it
    const again = t.buffer(FLOATS * 4, STORAGE)
    expect(again).toBe(first)
    expect(new Float32Array(await t.read(again, 0, FLOATS * 4, device.createCommandEncoder(), () => undefined))).toEqual(filled(0, FLOATS))
    // another size is made anew: a buffer bound whole must not be larger than asked for
    const other = t.buffer((FLOATS / 2) * 4, STORAGE)
    expect(other).not.toBe(first)
    expect(made).toEqual([FLOATS * 4, (FLOATS / 2) * 4])
    for (const b of [again, other]) t.keep(b)
  } finally {
    device.createBuffer = create
  }
})

test('bytes that ride come back with the next read as they were when asked for, in no read or submit of their own; alone where no read comes', async () => {
  const { device, read, done } = await counted()
  try {
    const t = new Transfers(device)
    const held = device.createBuffer({ size: 64, usage: STORAGE })
    t.write(held, 0, filled(8, 16))
    const submits = t.submits
    const first = t.ride(held, 16, 32, () => undefined)
    // its copy aside goes with the next submit (submitWithNext), not in one of its own
    expect(t.submits).toBe(submits)
    // changed after: the ride has the values of its moment (the write submits the copy first)
    t.write(held, 0, filled(9, 16))
    expect(t.submits).toBe(submits + 1)
    const second = t.ride(held, 0, 8, () => undefined)
    const reads = t.reads
    // the next read, of something else, brings its own bytes and both rides'
    expect(await read(t, 3, 100)).toEqual(filled(3, 100))
    expect(t.reads).toBe(reads + 1)
    expect(new Float32Array(await first())).toEqual(filled(8, 8))
    expect(new Float32Array(await second())).toEqual(filled(9, 2))
    expect(t.reads).toBe(reads + 1)
    // the control: with no read after it, taking it reads it alone
    const alone = t.ride(held, 0, 4, () => undefined)
    expect(new Float32Array(await alone())).toEqual(filled(9, 1))
    expect(t.reads).toBe(reads + 2)
    // a backend closing fails the rides still waiting
    const dropped = t.ride(held, 0, 4, () => undefined)
    t.dropRides()
    await expect(dropped()).rejects.toThrow('closed before its read came back')
    held.destroy()
  } finally {
    done()
  }
})

test("another engine's read on the device brings a ride back, its copy aside submitted first; a backend closing drops only its own rides", async () => {
  const { device, read, done } = await counted()
  try {
    const [a, b] = [new Transfers(device), new Transfers(device)]
    const held = device.createBuffer({ size: 64, usage: STORAGE })
    a.write(held, 0, filled(5, 16))
    const [aReads, bReads, aBytes, bBytes] = [a.reads, b.reads, a.bytes_read, b.bytes_read]
    // a's copy aside waits for a's next submit, which never comes: b's read submits it first
    const take = a.ride(held, 0, 16, () => undefined)
    expect(await read(b, 2, 10)).toEqual(filled(2, 10))
    expect(new Float32Array(await take())).toEqual(filled(5, 4))
    // the read counted to b, the bytes that rode on it to a
    expect([a.reads - aReads, b.reads - bReads]).toEqual([0, 1])
    expect([a.bytes_read - aBytes, b.bytes_read - bBytes]).toEqual([16, 40])
    // the control: with nothing read on the device after it, taking it reads it alone, on a
    const alone = a.ride(held, 16, 16, () => undefined)
    expect(new Float32Array(await alone())).toEqual(filled(5, 4))
    expect(a.reads - aReads).toBe(1)
    // a closing fails a's rides and leaves b's to come back with the next read
    const [mine, theirs] = [a.ride(held, 0, 4, () => undefined), b.ride(held, 4, 4, () => undefined)]
    a.dropRides()
    await expect(mine()).rejects.toThrow('closed before its read came back')
    expect(await read(a, 3, 10)).toEqual(filled(3, 10))
    expect(new Float32Array(await theirs())).toEqual(filled(5, 1))
    expect(b.reads - bReads).toBe(1)
    held.destroy()
  } finally {
    done()
  }
})

test('a ride taken while the read that carries it is under way waits for that read, not for one of its own', async () => {
  const { device, read, done } = await counted()
  try {
    const t = new Transfers(device)
    const held = device.createBuffer({ size: 16, usage: STORAGE })
    t.write(held, 0, filled(4, 4))
    const take = t.ride(held, 0, 16, () => undefined)
    const reads = t.reads
    // the read is submitted (the ride with it) before it is taken; taken before the read has come back
    const carrying = read(t, 1, 50)
    const [got] = await Promise.all([take(), carrying])
    expect(new Float32Array(got)).toEqual(filled(4, 4))
    expect(t.reads).toBe(reads + 1)
    held.destroy()
  } finally {
    done()
  }
})

test('work handed over with submitWithNext runs in the next submit, ahead of its work; a write to a buffer it uses submits it first (without that, it would see the write); dropped, it never runs', async () => {
  const { device } = (await keptDevice(await nodeGpu()))!
  const [a, b, c] = [0, 1, 2].map(() => device.createBuffer({ size: FLOATS * 4, usage: STORAGE }))
  const t = new Transfers(device)
  const copy = (from: GPUBuffer, to: GPUBuffer) => {
    const encoder = device.createCommandEncoder()
    encoder.copyBufferToBuffer(from, 0, to, 0, FLOATS * 4)
    return encoder
  }
  const read = async (src: GPUBuffer) => new Float32Array(await t.read(src, 0, FLOATS * 4, device.createCommandEncoder(), () => undefined))
  try {
    // a -> b handed over, then b -> c submitted: c has a's values, in one submit
    t.write(a, 0, filled(1, FLOATS))
    t.submitWithNext(copy(a, b), [a, b])
    expect(t.submits).toBe(0)
    t.submit(copy(b, c))
    expect(t.submits).toBe(1)
    expect(await read(c)).toEqual(filled(1, FLOATS))
    // a write to a buffer the handed-over work uses: the work goes first and copies the values before it
    t.write(a, 0, filled(2, FLOATS))
    t.submitWithNext(copy(a, b), [a, b])
    t.write(a, 0, filled(3, FLOATS))
    expect(await read(b)).toEqual(filled(2, FLOATS))
    // the control: the same work with its buffers left unnamed sees the later write
    t.submitWithNext(copy(a, b), [])
    t.write(a, 0, filled(4, FLOATS))
    expect(await read(b)).toEqual(filled(4, FLOATS))
    // dropped (its backend closing): never run
    t.submitWithNext(copy(c, b), [c, b])
    t.dropDeferred()
    t.flush()
    expect(await read(b)).toEqual(filled(4, FLOATS))
  } finally {
    for (const x of [a, b, c]) x.destroy()
  }
})

test('work handed over that names bytes of a buffer is submitted first only by a write to those bytes; DEFERRED_MAX handed over go in one submit', async () => {
  const { device } = (await keptDevice(await nodeGpu()))!
  const [a, b] = [0, 1].map(() => device.createBuffer({ size: FLOATS * 4, usage: STORAGE }))
  const t = new Transfers(device)
  const half = (FLOATS / 2) * 4
  // the first half of a copied to the first half of b, handed over naming only a's first half
  const copyHalf = () => {
    const encoder = device.createCommandEncoder()
    encoder.copyBufferToBuffer(a, 0, b, 0, half)
    return encoder
  }
  const read = async (src: GPUBuffer) => new Float32Array(await t.read(src, 0, half, device.createCommandEncoder(), () => undefined))
  try {
    t.write(a, 0, filled(1, FLOATS))
    t.submitWithNext(copyHalf(), [{ buffer: a, offset: 0, size: half }, b])
    // a write to a's other half: the work stays handed over
    t.write(a, half, filled(2, FLOATS / 2))
    expect(t.submits).toBe(0)
    // a write that reaches into the named bytes (its last float): submitted first, so it copies the 1s
    t.write(a, half - 4, filled(3, 1))
    expect(t.submits).toBe(1)
    expect(await read(b)).toEqual(filled(1, FLOATS / 2))
    // handed over DEFERRED_MAX times, they go in one submit without waiting for another
    const submits = t.submits
    for (let k = 0; k < DEFERRED_MAX; k++) t.submitWithNext(copyHalf(), [])
    expect(t.submits).toBe(submits + 1)
    expect((await read(b)).at(-1)).toBe(3)
  } finally {
    for (const x of [a, b]) x.destroy()
  }
})
