// The package's contracts entry (`resonant-crystal/contracts`): the TypeBox schemas of the REST
// bodies, the registry file, materials and every bus subject, with their checkers. Re-exports only.
export * from './api.js'
export * from './consciousness.js'
export * from './material.js'
export * from './registry.js'
export * from './subjects.js'
export * from './swarm.js'
