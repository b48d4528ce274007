// The package's main entry in Node (`resonant-crystal`): the browser entry plus what needs Node:
// Dawn's WebGPU and worker threads, material files, and the registry and medium over files.
/// <reference types="@webgpu/types" preserve="true" />
export * from './browser.js'
export { createNodeEngine } from './node.js'
export { loadCatalog, loadMaterialFile } from './field/materials.node.js'
export { FileRegistryStore, type FileStoreOptions } from './registry/file_store.node.js'
export { MediumStore } from './medium/file_store.node.js'
