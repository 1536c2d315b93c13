import { assert, describe, it } from "@effect/vitest"
import { makeSharedTimers, type TimerHost } from "../../src/programs/SharedTimers.js"

interface FakeTimer {
  readonly at: number
  readonly fire: () => void
  refed: boolean
  fired: boolean
}

// A host whose clock moves only when told, and whose timers fire, in the order they fall due, as it moves past them;
// `early` makes them fire that much before their time (the event loop's clock is not quite the one read).
const fakeHost = (early = 0) => {
  let time = 0
  const timers: Array<FakeTimer> = []
  const host: TimerHost = {
    now: () => time,
    start: (fire, ms) => {
      const timer: FakeTimer = { at: time + ms - early, fire, refed: true, fired: false }
      timers.push(timer)
      return {
        ref: () => void (timer.refed = true),
        unref: () => void (timer.refed = false)
      }
    }
  }
  const advanceTo = (to: number) => {
    for (;;) {
      const next = timers.filter((t) => !t.fired && t.at <= to).sort((a, b) => a.at - b.at)[0]
      if (next === undefined) break
      time = next.at
      next.fired = true
      next.fire()
    }
    time = to
  }
  const pending = () => timers.filter((t) => !t.fired)
  return { host, timers, advanceTo, pending }
}

describe("makeSharedTimers", () => {
  it("limits of one length share one timer; each task runs once its time has passed, in order", () => {
    const { advanceTo, host, pending, timers } = fakeHost()
    const schedule = makeSharedTimers(host)
    const ran: Array<string> = []
    schedule(() => ran.push("a"), 100)
    advanceTo(10)
    schedule(() => ran.push("b"), 100)
    advanceTo(30)
    schedule(() => ran.push("c"), 100)
    assert.strictEqual(timers.length, 1, "one timer for three limits")
    advanceTo(99)
    assert.deepStrictEqual(ran, [])
    advanceTo(100)
    assert.deepStrictEqual(ran, ["a"])
    assert.deepStrictEqual(pending().map((t) => t.at), [110], "set again for the first limit left")
    advanceTo(130)
    assert.deepStrictEqual(ran, ["a", "b", "c"])
    assert.strictEqual(pending().length, 0)
  })

  it("a cancelled limit never runs, and a timer with nothing left to wait for does not keep the process alive", () => {
    const { advanceTo, host, pending } = fakeHost()
    const schedule = makeSharedTimers(host)
    const ran: Array<string> = []
    const cancelA = schedule(() => ran.push("a"), 100)
    cancelA()
    cancelA()
    assert.deepStrictEqual(pending().map((t) => t.refed), [false], "left set, unreferenced")
    advanceTo(20)
    const cancelB = schedule(() => ran.push("b"), 100)
    assert.deepStrictEqual(pending().map((t) => t.refed), [true], "the same timer, referenced again")
    advanceTo(100)
    assert.deepStrictEqual(ran, [], "the timer fired for the cancelled limit: nothing was due")
    assert.deepStrictEqual(pending().map((t) => t.at), [120])
    advanceTo(120)
    assert.deepStrictEqual(ran, ["b"])
    cancelB()
    assert.deepStrictEqual(ran, ["b"], "cancelling after it ran does nothing")
    assert.strictEqual(pending().length, 0)
  })

  it("a limit cancelled between others is unlinked; the others still run in time", () => {
    const { advanceTo, host } = fakeHost()
    const schedule = makeSharedTimers(host)
    const ran: Array<string> = []
    schedule(() => ran.push("a"), 50)
    advanceTo(5)
    const cancelB = schedule(() => ran.push("b"), 50)
    advanceTo(10)
    schedule(() => ran.push("c"), 50)
    cancelB()
    advanceTo(59)
    assert.deepStrictEqual(ran, ["a"])
    advanceTo(60)
    assert.deepStrictEqual(ran, ["a", "c"])
  })

  it("each length has a timer of its own", () => {
    const { advanceTo, host, pending } = fakeHost()
    const schedule = makeSharedTimers(host)
    const ran: Array<string> = []
    schedule(() => ran.push("long"), 100)
    schedule(() => ran.push("short"), 30)
    assert.deepStrictEqual(pending().map((t) => t.at), [100, 30])
    advanceTo(30)
    assert.deepStrictEqual(ran, ["short"])
    advanceTo(100)
    assert.deepStrictEqual(ran, ["short", "long"])
  })

  it("a task the timer runs may make a limit of the same length: one made before it still falls due in time", () => {
    const { advanceTo, host } = fakeHost()
    const schedule = makeSharedTimers(host)
    const ranAt: Record<string, number> = {}
    schedule(() => {
      ranAt.a = host.now()
      schedule(() => void (ranAt.c = host.now()), 50)
    }, 50)
    advanceTo(10)
    schedule(() => void (ranAt.b = host.now()), 50)
    advanceTo(200)
    assert.deepStrictEqual(ranAt, { a: 50, b: 60, c: 100 })
  })

  it("a task that throws does not stop the others due, nor the timer of those left; its error is thrown after", () => {
    const { advanceTo, host, pending } = fakeHost()
    const schedule = makeSharedTimers(host)
    const ran: Array<string> = []
    schedule(() => {
      throw new Error("boom")
    }, 50)
    schedule(() => ran.push("b"), 50)
    advanceTo(10)
    schedule(() => ran.push("c"), 50)
    assert.throws(() => advanceTo(50), "boom")
    assert.deepStrictEqual(ran, ["b"])
    assert.deepStrictEqual(pending().map((t) => t.at), [60])
    advanceTo(60)
    assert.deepStrictEqual(ran, ["b", "c"])
  })

  it("a task never runs before its time on the host's clock, even when the timer fires early by it", () => {
    const { advanceTo, host, pending } = fakeHost(0.5)
    const schedule = makeSharedTimers(host)
    let ran = false
    schedule(() => void (ran = true), 100)
    advanceTo(99.5)
    assert.isFalse(ran, "fired at 99.5")
    assert.deepStrictEqual(pending().map((t) => t.at), [100], "set again, for at least a millisecond")
    advanceTo(100)
    assert.isTrue(ran)
  })
})
