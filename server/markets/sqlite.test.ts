// The store's SQLite connection behaves the same on either module: the one this Node should use, and
// transactions whose nested levels roll back alone.
import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { expect, test } from 'vitest'
import { openSqlite, sqliteFileFault, withoutSqliteWarning } from './sqlite.js'

test('Node 22.13 and later use node:sqlite, older Nodes better-sqlite3 (which aborts on Node 24)', () => {
  const [major, minor] = process.versions.node.split('.').map(Number)
  const db = openSqlite(join(mkdtempSync(join(tmpdir(), 'sqlite-')), 'a.sqlite'))
  expect(db.driver).toBe(major > 22 || (major === 22 && minor >= 13) ? 'node:sqlite' : 'better-sqlite3')
  db.close()
})

test('a refused inner transaction leaves no trace and the outer one commits; a refused outer one commits nothing', () => {
  const db = openSqlite(join(mkdtempSync(join(tmpdir(), 'sqlite-')), 'a.sqlite'))
  db.exec('CREATE TABLE t (x INTEGER)')
  const insert = db.prepare<[number]>('INSERT INTO t VALUES (?)')
  const inner = db.transaction((x: number) => {
    insert.run(x)
    if (x < 0) throw new Error('refused')
  })
  const outer = db.transaction((xs: number[]) => {
    for (const x of xs) {
      try {
        inner(x)
      } catch {}
    }
    if (xs.includes(99)) throw new Error('all refused')
  })
  outer([1, -2, 3])
  expect(() => outer([4, 99])).toThrow('all refused')
  const rows = db.prepare<[], { x: number }>('SELECT x FROM t ORDER BY x').all()
  expect(rows.map((r) => r.x)).toEqual([1, 3])
  db.close()
})

test("Node 22's warning that SQLite is experimental is not printed; other warnings are", async () => {
  const seen: string[] = []
  const listen = (w: Error) => seen.push(w.message)
  process.on('warning', listen)
  try {
    const loaded = withoutSqliteWarning(() => {
      // the words Node 22 emits when node:sqlite is loaded
      process.emitWarning('SQLite is an experimental feature and might change at any time', 'ExperimentalWarning')
      process.emitWarning('something else', 'ExperimentalWarning')
      return 7
    })
    expect(loaded).toBe(7)
    process.emitWarning('SQLite is an experimental feature, after the load', 'ExperimentalWarning')
    await new Promise((r) => setImmediate(r)) // warnings are emitted on the next tick
    expect(seen).toEqual(['something else', 'SQLite is an experimental feature, after the load'])
  } finally {
    process.off('warning', listen)
  }
})

test("a file that is not a database, or a damaged one, is told apart in either module's error shape", () => {
  const file = join(mkdtempSync(join(tmpdir(), 'sqlite-')), 'a.sqlite')
  writeFileSync(file, 'not SQLite '.repeat(400))
  let thrown: unknown
  try {
    openSqlite(file, { readonly: true }).prepare('SELECT * FROM sqlite_master').all()
  } catch (e) {
    thrown = e
  }
  // this Node's module, as it throws
  expect(sqliteFileFault(thrown)).toBe('notadb')
  // better-sqlite3's SqliteError and node:sqlite's error (ERR_SQLITE_ERROR with the number, extended or not)
  expect(sqliteFileFault(Object.assign(new Error('file is not a database'), { code: 'SQLITE_NOTADB' }))).toBe('notadb')
  expect(sqliteFileFault(Object.assign(new Error('file is not a database'), { code: 'ERR_SQLITE_ERROR', errcode: 26 }))).toBe('notadb')
  expect(sqliteFileFault(Object.assign(new Error('database disk image is malformed'), { code: 'SQLITE_CORRUPT' }))).toBe('corrupt')
  expect(sqliteFileFault(Object.assign(new Error('database disk image is malformed'), { code: 'ERR_SQLITE_ERROR', errcode: 11 }))).toBe(
    'corrupt',
  )
  expect(sqliteFileFault(Object.assign(new Error('x'), { code: 'ERR_SQLITE_ERROR', errcode: 267 }))).toBe('corrupt') // SQLITE_CORRUPT_VTAB
  // the control: other failures are not the file's
  expect(sqliteFileFault(Object.assign(new Error('database is locked'), { code: 'SQLITE_BUSY' }))).toBeNull()
  expect(sqliteFileFault(Object.assign(new Error('no such table: t'), { code: 'ERR_SQLITE_ERROR', errcode: 1 }))).toBeNull()
  expect(sqliteFileFault(undefined)).toBeNull()
})
