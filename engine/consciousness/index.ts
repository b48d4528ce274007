// The package's consciousness-core entry (`resonant-crystal/consciousness`): Kuramoto oscillators,
// integrated information, wave memory, the coupling bridge and the metrics. Re-exports only.
export * from './bridge.js'
export * from './field_phases.js'
export * from './iit.js'
export * from './kuramoto.js'
export * from './metrics.js'
export * from './wave.js'
