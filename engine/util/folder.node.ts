// A folder that long work will write into, made and checked before the work starts: a folder that
// cannot be written is said at once, not after an evolve's or a benchmark's minutes (whose results
// would then be lost).
import { constants } from 'node:fs'
import { access, mkdir } from 'node:fs/promises'
import { CrystalError } from '../errors.js'

/** Makes `dir` if need be and checks that it can be written; else a bad_argument naming it, `what` it is and `hint`. */
export async function writableFolder(dir: string, what: string, hint: string): Promise<void> {
  try {
    await mkdir(dir, { recursive: true })
    await access(dir, constants.W_OK)
  } catch (e) {
    const why = (e as NodeJS.ErrnoException).code ?? (e as Error).message
    throw new CrystalError('bad_argument', `${what} ${dir} cannot be written (${why}); ${hint}`, { file: dir })
  }
}
