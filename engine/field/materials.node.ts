// Material files from disk (Node only): one file, or every *.json in <data dir>/materials/.
// A bad file is refused with the file, the field and the reason; nothing runs with it.
import { readdirSync, readFileSync, existsSync } from 'node:fs'
import { join } from 'node:path'
import { parseMaterial } from '../contracts/material.js'
import { CrystalError } from '../errors.js'
import { MaterialCatalog, type CatalogEntry } from './materials.js'

export function loadMaterialFile(file: string): CatalogEntry {
  let text: string
  try {
    text = readFileSync(file, 'utf8')
  } catch (e) {
    throw new CrystalError(
      'bad_material',
      `${file}: cannot read the material file (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`,
      { file },
    )
  }
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch (e) {
    throw new CrystalError('bad_material', `${file}: not valid JSON (${(e as Error).message})`, { file })
  }
  return { material: parseMaterial(value, file), source: file }
}

/** Built-ins, then <dataDir>/materials/*.json, then the explicit files, later names replacing earlier. */
export function loadCatalog(dataDir: string | undefined, files: string[] = []): MaterialCatalog {
  const dir = dataDir ? join(dataDir, 'materials') : undefined
  const fromDir =
    dir && existsSync(dir)
      ? readdirSync(dir)
          .filter((f) => f.endsWith('.json'))
          .sort()
          .map((f) => join(dir, f))
      : []
  return new MaterialCatalog([...fromDir, ...files].map(loadMaterialFile))
}
