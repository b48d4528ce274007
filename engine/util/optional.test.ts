// An optional package that is not installed is named, with what needs it and how to install it; a
// package that is installed but broken inside is not mistaken for a missing one.
import { describe, expect, test } from 'vitest'
import { importOptional, requireOptional } from './optional.node.js'

describe('optional packages', () => {
  test('import: a missing package is one error naming it, what needs it and the install command', async () => {
    const e = await importOptional('no-such-package-for-crystal', 'the test', 'skip it').catch((x) => x)
    expect(e).toMatchObject({
      code: 'missing_dependency',
      message: 'the test needs the optional package no-such-package-for-crystal, which is not installed',
      hint: 'npm install no-such-package-for-crystal, or skip it',
    })
  })

  test('require: the same for a CommonJS package', () => {
    expect(() => requireOptional('no-such-package-for-crystal', 'the test')).toThrow(
      'the test needs the optional package no-such-package-for-crystal, which is not installed',
    )
  })

  test('an installed package is loaded as it is', async () => {
    const { Type } = await importOptional<typeof import('@sinclair/typebox')>('@sinclair/typebox', 'the test')
    expect(Type.String()).toMatchObject({ type: 'string' })
  })

  test('a package that is there but fails inside (a dependency of its own missing) keeps its own error', async () => {
    const inner = Object.assign(new Error("Cannot find package 'something-inside' imported from /x/webgpu/index.js"), {
      code: 'ERR_MODULE_NOT_FOUND',
    })
    const e = await importOptional('webgpu', 'the test', undefined, () => Promise.reject(inner)).catch((x) => x)
    expect(e).toBe(inner)
  })
})
