// The server's JSON body parser refuses a repeated key anywhere in the body, after unescaping.
import { describe, expect, it } from 'vitest'
import { duplicateKey } from './json_body.js'

describe('duplicateKey', () => {
  it('names the first repeated key with its path, at any depth', () => {
    expect(duplicateKey('{"shares":1,"shares":1000}')).toBe('/shares')
    expect(duplicateKey('{"a":{"b":1,"c":{"d":[1,{"e":1,"e":2}]}}}')).toBe('/a/c/d/*/e')
    // the same key spelled with an escape
    expect(duplicateKey('{"a":1,"\\u0061":2}')).toBe('/a')
  })

  it('passes bodies whose keys are each once in their object: the controls', () => {
    expect(duplicateKey('{"shares":1,"outcome":"shares"}')).toBeNull()
    expect(duplicateKey('[{"a":1},{"a":2}]')).toBeNull()
    expect(duplicateKey('{"a":{"a":{"a":1}},"b":"\\"a\\",\\"a\\""}')).toBeNull()
    expect(duplicateKey('"just a string"')).toBeNull()
  })
})
