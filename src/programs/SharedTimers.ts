/** Schedules `task` after `ms` milliseconds; the returned function cancels it. */
export type Schedule = (task: () => void, ms: number) => () => void

/**
 * A timer of the host (Node's `setTimeout`): it fires once; `unref` lets the process end while it is pending, `ref`
 * undoes that. Both may be called again and again.
 */
export interface TimerHandle {
  readonly ref: () => void
  readonly unref: () => void
}

/** What the shared timers need: a monotonic clock in milliseconds, and one-shot timers. */
export interface TimerHost {
  readonly now: () => number
  readonly start: (fire: () => void, ms: number) => TimerHandle
}

// A class, not an object literal: V8 can move a literal's allocation site to the old generation once its objects
// are often found alive by a young-generation collection (an entry is, whenever a call is under way), and an
// entry made there keeps its task, and all the task holds, through every young-generation collection until the
// next full one, long after the limit ended.
class Entry {
  next: Entry | undefined = undefined
  constructor(
    readonly due: number,
    // Undefined once the task has run or been cancelled.
    public task: (() => void) | undefined,
    public prev: Entry | undefined
  ) {}
}

/** The limits of one length, in the order they began (so in the order they fall due), and their one timer. */
interface Lane {
  head: Entry | undefined
  tail: Entry | undefined
  // The host's timer while it is set; it keeps the process alive only while a limit waits.
  timer: TimerHandle | undefined
}

/**
 * Limits of the same length share one timer of the host. A limit is an entry at the end of its length's list:
 * the entries of a list fall due in the order they were made. The list's timer is set for its first entry;
 * cancelling a limit unlinks its entry and leaves the timer alone (not keeping the process alive once nothing
 * waits). When the timer fires, it runs the tasks that are due, in order, and is set again for the first entry
 * left. A limit that ends in time, the common case (a tool or a model that answers), costs a small object and a
 * clock read, where a timer of its own costs a `setTimeout` and a `clearTimeout`: a Timeout object, its place in
 * the host's timer lists and a read of the event loop's clock, each time. A task never runs before its `ms` have
 * passed on the host's clock.
 */
export const makeSharedTimers = (host: TimerHost): Schedule => {
  const lanes = new Map<number, Lane>()

  const unlink = (lane: Lane, entry: Entry) => {
    if (entry.prev === undefined) lane.head = entry.next
    else entry.prev.next = entry.next
    if (entry.next === undefined) lane.tail = entry.prev
    else entry.next.prev = entry.prev
    entry.prev = undefined
    entry.next = undefined
  }

  const arm = (lane: Lane, ms: number) => {
    lane.timer = host.start(() => fire(lane), Math.max(1, Math.ceil(ms)))
  }

  const fire = (lane: Lane) => {
    lane.timer = undefined
    const now = host.now()
    // Each due entry is unlinked before its task runs: a task may make or cancel limits of this lane. A task that
    // throws keeps neither the others nor the next timer from running: its error is thrown once they have (as its
    // own timer's callback would have thrown it).
    let thrown: { readonly error: unknown } | undefined
    for (let first = lane.head; first !== undefined && first.due <= now; first = lane.head) {
      const task = first.task
      first.task = undefined
      unlink(lane, first)
      try {
        task?.()
      } catch (error) {
        thrown ??= { error }
      }
    }
    if (lane.head !== undefined && lane.timer === undefined) arm(lane, lane.head.due - host.now())
    if (thrown !== undefined) throw thrown.error
  }

  return (task, ms) => {
    let lane = lanes.get(ms)
    if (lane === undefined) {
      lane = { head: undefined, tail: undefined, timer: undefined }
      lanes.set(ms, lane)
    }
    const now = host.now()
    const entry = new Entry(now + ms, task, lane.tail)
    if (lane.tail === undefined) lane.head = entry
    else lane.tail.next = entry
    lane.tail = entry
    // Without a timer, one is set for the first entry (this one, unless a task run as the timer fired makes it);
    // a timer still set falls due no later than the first entry (it was set for an entry made before it).
    if (lane.timer === undefined) arm(lane, (lane.head ?? entry).due - now)
    else lane.timer.ref()
    const owner = lane
    return () => {
      if (entry.task === undefined) return
      entry.task = undefined
      unlink(owner, entry)
      if (owner.head === undefined) owner.timer?.unref()
    }
  }
}
