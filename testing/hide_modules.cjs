// Makes the packages named in CRYSTAL_TEST_HIDE (comma-separated) look not installed, to require()
// and import() alike, so a test sees what a user without an optional dependency sees. Preload it:
// node --require testing/hide_modules.cjs ...
const Module = require('node:module')

const hidden = (process.env.CRYSTAL_TEST_HIDE ?? '').split(',').filter(Boolean)
const resolveFilename = Module._resolveFilename
Module._resolveFilename = function (request, ...rest) {
  if (hidden.includes(request)) throw Object.assign(new Error(`Cannot find module '${request}'`), { code: 'MODULE_NOT_FOUND' })
  return resolveFilename.call(this, request, ...rest)
}
const missing = (specifier, parent) =>
  Object.assign(new Error(`Cannot find package '${specifier}' imported from ${parent}`), { code: 'ERR_MODULE_NOT_FOUND' })
const resolve = (specifier, context, next) => {
  if (hidden.includes(specifier)) throw missing(specifier, context.parentURL)
  return next(specifier, context)
}
if (Module.registerHooks) {
  // Node 22.15 and later: hooks on this thread (Node 26 deprecates module.register, with a warning the tests read)
  Module.registerHooks({ resolve })
} else {
  // the same hook on the loader's thread: its source, with what it uses
  const hook = `const hidden = ${JSON.stringify(hidden)}\nconst missing = ${missing}\nexport const resolve = ${resolve}`
  Module.register(`data:text/javascript,${encodeURIComponent(hook)}`)
}
