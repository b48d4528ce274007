// Loading a package the product can run without (package.json's optionalDependencies, or a dev
// dependency only a benchmark uses): when it is not installed, one error that names the package,
// what needs it and how to install it, instead of a bare ERR_MODULE_NOT_FOUND from deep inside.
import { createRequire } from 'node:module'
import { CrystalError } from '../errors.js'

/** Whether `e` says that `specifier` itself is not installed (not that something inside it is broken). */
export function isMissing(e: unknown, specifier: string): boolean {
  const { code, message } = (e ?? {}) as { code?: string; message?: string }
  return (
    (code === 'ERR_MODULE_NOT_FOUND' || code === 'MODULE_NOT_FOUND') && typeof message === 'string' && message.includes(`'${specifier}'`)
  )
}

/** The error for a missing optional package: `needed` says what needs it ("the GPU backend"). */
export function missingPackage(specifier: string, needed: string, otherwise?: string): CrystalError {
  return new CrystalError(
    'missing_dependency',
    `${needed} needs the optional package ${specifier}, which is not installed`,
    { field: specifier },
    `npm install ${specifier}${otherwise ? `, or ${otherwise}` : ''}`,
  )
}

/** import(specifier), or missingPackage(...) when it is not installed. `load` is the import itself (a test points it elsewhere). */
export async function importOptional<T>(
  specifier: string,
  needed: string,
  otherwise?: string,
  load: (s: string) => Promise<unknown> = (s) => import(s),
): Promise<T> {
  try {
    return (await load(specifier)) as T
  } catch (e) {
    throw isMissing(e, specifier) ? missingPackage(specifier, needed, otherwise) : e
  }
}

/** require(specifier) for a CommonJS package, or missingPackage(...) when it is not installed. */
export function requireOptional<T>(
  specifier: string,
  needed: string,
  otherwise?: string,
  require: (s: string) => unknown = createRequire(import.meta.url),
): T {
  try {
    return require(specifier) as T
  } catch (e) {
    throw isMissing(e, specifier) ? missingPackage(specifier, needed, otherwise) : e
  }
}
