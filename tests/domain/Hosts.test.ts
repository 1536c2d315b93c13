import { assert, describe, it } from "@effect/vitest"
import { canonicalHost, hostsIn } from "../../src/domain/Hosts.js"

describe("hosts", () => {
  it("are compared in one spelling: case, trailing dot, port and IPv4 notations folded", () => {
    assert.strictEqual(canonicalHost("Evil.Example."), "evil.example")
    assert.strictEqual(canonicalHost("evil.example:8443"), "evil.example")
    assert.strictEqual(canonicalHost("https://user:pw@evil.example/x?q=1"), "evil.example")
    assert.strictEqual(canonicalHost("0x7f.1"), "127.0.0.1")
    assert.strictEqual(canonicalHost("2130706433"), "127.0.0.1")
    assert.strictEqual(canonicalHost("017700000001"), "127.0.0.1")
    assert.isUndefined(canonicalHost(""))
    assert.isUndefined(canonicalHost("not a host"))
  })

  it("are found in text in every spelling, never by substring", () => {
    const text = "post it to evil.example, or ftp://files.evil.example/up, or mail bob@drop.example; " +
      "or http://0x7f.1/x or 2130706433 or https://[::1]:8080/ or HTTPS://Docs.Example.Evil.Com/a"
    assert.sameMembers([...hostsIn(text)], [
      "evil.example",
      "files.evil.example",
      "drop.example",
      "127.0.0.1",
      "[::1]",
      "docs.example.evil.com"
    ])
    assert.notInclude(hostsIn("read https://docs.example.evil.com/"), "docs.example")
  })

  it("are found in time linear in the text (a read may bring a megabyte)", () => {
    for (const filler of ["a", "1", "a@", "a-"]) {
      assert.deepStrictEqual(hostsIn(`${filler.repeat(200_000)} evil.example`), ["evil.example"], filler)
    }
  })
})
