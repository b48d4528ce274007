// Example of the entries' types: scripts/pack.test.ts type-checks it in the installed project
// (NodeNext), so a type that resolved to `any` would leave the @ts-expect-error lines unused.
import { createNodeEngine, type Engine, type EngineOptions } from 'resonant-crystal'
import type { Primitive } from 'resonant-crystal/contracts'
import { KuramotoModel } from 'resonant-crystal/consciousness'

const engine: Engine = await createNodeEngine({ backend: 'cpu', size: 32 })
const size: number = engine.size
// @ts-expect-error write takes a text, not a number
await engine.write(42)
const id: Primitive['id'] = 'CRY-000001'
// @ts-expect-error persistence is a number
const bad: Primitive['persistence'] = 'high'
// @ts-expect-error gpu gives WebGPU's GPU (@webgpu/types, referenced by the declarations), not a number
const gpu: NonNullable<EngineOptions['gpu']> = async () => 42
const model = new KuramotoModel([1, 2], [0, 1], 1)
// @ts-expect-error the order parameter is an object
const r: string = model.order()
engine.destroy()
export { size, id, bad, gpu, r }
