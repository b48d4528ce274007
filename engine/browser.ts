// The package's browser entry (`resonant-crystal/browser`): the engine without any Node module, for
// a tab that passes `gpu: async () => navigator.gpu`. Re-exports only; the code lives in its folders.
/// <reference types="@webgpu/types" preserve="true" />
export { createEngine, MIN_SIZE, MAX_SIZE, type Engine, type EngineOptions, type EnergyBooks, type Memory } from './field/engine.js'
export { BUILT_IN_MATERIALS, MaterialCatalog, type CatalogEntry } from './field/materials.js'
export { CrystalError, isCrystalError, type ErrorCode } from './errors.js'
export { ENCODING_VERSION, textSources, textWavefront } from './encode/text.js'
export { discover, merge, split, type DiscoveryOptions, type DiscoveryProgress, type DiscoveryResult } from './discovery/discovery.js'
export { Registry, MemoryRegistryStore, quality, type RegistryStore, type RegisterOutcome } from './registry/registry.js'
export { parse, check, formatError } from './lang/parse.js'
export { interpret, type InterpretContext, type TraceEntry } from './lang/interpret.js'
