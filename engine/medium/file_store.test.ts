// The medium file's formats: format 3 names the text encoding of its memories; a file naming one this
// build does not read, or of format 1, is refused with the file and the reason, and left as it is.
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, test } from 'vitest'
import { ENCODING_VERSION } from '../encode/text.js'
import { MediumStore } from './file_store.node.js'
import { emptyMedium, MEDIUM_FORMAT } from './medium.js'

/** A store over a new data dir holding a medium of N = 16 whose header is changed by `edit`. */
async function storeWith(edit: (header: Record<string, unknown>) => void): Promise<MediumStore> {
  const store = new MediumStore(mkdtempSync(join(tmpdir(), 'crystal-medium-')))
  await store.update({ size: 16, material: 'vacuum' }, async () => undefined)
  const bytes = readFileSync(store.path)
  const length = bytes.readUInt32LE(0)
  const header = JSON.parse(bytes.subarray(4, 4 + length).toString('utf8'))
  edit(header)
  const json = Buffer.from(JSON.stringify(header))
  const prefix = Buffer.alloc(4)
  prefix.writeUInt32LE(json.length)
  writeFileSync(store.path, Buffer.concat([prefix, json, bytes.subarray(4 + length)]))
  return store
}

describe('the medium file and its text encoding', () => {
  test('a new medium is format 3 with the encoding new fields use, and loads as it was saved', async () => {
    expect(emptyMedium(16, 'vacuum').encoding).toBe(ENCODING_VERSION)
    const store = await storeWith(() => undefined)
    expect(await store.load()).toMatchObject({ size: 16, material: 'vacuum', encoding: ENCODING_VERSION })
    const bytes = readFileSync(store.path)
    expect(JSON.parse(bytes.subarray(4, 4 + bytes.readUInt32LE(0)).toString('utf8'))).toMatchObject({
      format: MEDIUM_FORMAT,
      encoding: ENCODING_VERSION,
    })
  })

  test('an encoding this build does not read, or format 1, is refused naming the file and the encodings it reads; the file is left as it is', async () => {
    const unknown = await storeWith((h) => (h.encoding = 7))
    const before = readFileSync(unknown.path)
    await expect(unknown.load()).rejects.toThrow(
      `${unknown.path}: it holds memories of text encoding 7, which this version cannot read back (it reads 2 and 3); the file was left as it is`,
    )
    expect(readFileSync(unknown.path)).toEqual(before)
    const format1 = await storeWith((h) => ((h.format = 'svc-crystal-medium/1'), delete h.encoding))
    await expect(format1.load()).rejects.toThrow(
      'it holds memories of text encoding 1, which this version cannot read back (it reads 2 and 3)',
    )
  })
})
