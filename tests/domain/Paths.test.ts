import { describe, expect, it } from "vitest"
import { isInside, relativeInside } from "../../src/domain/Paths.js"

describe("relativeInside / isInside", () => {
  it("the root itself is inside, as '.'", () => {
    expect(relativeInside("/w", "/w")).toBe(".")
    expect(isInside("/w", "/w/")).toBe(true)
  })

  it("a descendant is inside, relative to the root", () => {
    expect(relativeInside("/w", "/w/notes/a.md")).toBe("notes/a.md")
  })

  it("a folder whose name starts with two dots is inside, not an escape", () => {
    expect(relativeInside("/w", "/w/..backups")).toBe("..backups")
    expect(isInside("/w", "/w/..backups/x")).toBe(true)
  })

  it("the parent, a sibling with the same prefix and another tree are outside", () => {
    expect(isInside("/w", "/")).toBe(false)
    expect(isInside("/w", "/w2/a")).toBe(false)
    expect(isInside("/w", "/w/../etc")).toBe(false)
    expect(relativeInside("/w", "/other")).toBeUndefined()
  })
})
