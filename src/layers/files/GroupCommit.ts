import { Effect, type Exit, Fiber } from "effect"

/**
 * Completes a request: its caller resumes with `exit`. Only the first call counts; a caller interrupted
 * meanwhile is not resumed (its job was written all the same).
 */
export type Reply<A, E> = (exit: Exit.Exit<A, E>) => void

/**
 * One writer fiber behind a queue (group commit): callers offer jobs; the fiber takes everything queued as
 * one batch and runs `step` on it, uninterruptibly, so a batch is written whole or reported failed, and one
 * sync can cover every job of the batch. When the scope closes, the fiber writes what is still queued (and
 * what is queued while it does) and stops, then `shutdown` runs; a job offered after that is refused.
 */
export interface GroupCommit<J> {
  /** Queues a job; false when the writer has closed (nothing was queued). */
  readonly offer: (job: J) => Effect.Effect<boolean>
  /**
   * Queues the job built around a fresh `done` and waits for the writer to call it; `closed` is the failure
   * when the writer has already closed.
   */
  readonly request: <A, E>(
    make: (done: Reply<A, E>) => J,
    closed: () => E
  ) => Effect.Effect<A, E>
}

export interface GroupCommitOptions<J> {
  readonly step: (batch: ReadonlyArray<J>) => Effect.Effect<void>
  readonly shutdown?: Effect.Effect<void>
  /** The most jobs one batch takes; 1 writes jobs one by one. */
  readonly maxBatch?: number
}

export const makeGroupCommit = <J>(options: GroupCommitOptions<J>) =>
  Effect.gen(function*() {
    const maxBatch = options.maxBatch ?? 10_000
    // The jobs not yet taken, in order. A plain buffer rather than a Queue: every record of every turn passes
    // here, and a Queue's take (an interruptible wait with its own region, for a writer that is never
    // interrupted) costs several times the operations of the wait below.
    const pending: Array<J> = []
    // Closing: the writer takes what is queued until nothing is left; then it is shut, and refuses jobs.
    let closing = false
    let shut = false
    let wake: (() => void) | undefined
    const notify = () => {
      const waiting = wake
      wake = undefined
      waiting?.()
    }
    // Checked and queued in one synchronous stretch: a job is either written or refused.
    const unsafeOffer = (job: J): boolean => {
      if (shut) return false
      pending.push(job)
      notify()
      return true
    }
    // Waits for a job, or for closing; checks again as it begins: a job queued in between is not left waiting.
    const wait = Effect.async<void>((resume) => {
      if (pending.length > 0 || closing) resume(Effect.void)
      else wake = () => resume(Effect.void)
    })
    // The writer fiber stops when closing has emptied the buffer, never by interruption: an interrupt that
    // reaches it while a step runs a finalizer (a file or a lock released) can be lost, when that step had joined
    // a fiber that was interrupted, and the fiber would then wait for jobs for ever, holding up the close of the
    // scope. Taking and writing are uninterruptible: jobs already taken are never dropped (their callers would
    // wait for ever). Each turn through the loop takes everything queued as one batch, or waits, or (closing with
    // nothing left) shuts the writer; every record of every turn comes through here.
    const loop: Effect.Effect<void> = Effect.suspend(() => {
      if (pending.length > 0) return Effect.zipRight(options.step(pending.splice(0, maxBatch)), loop)
      if (closing) {
        shut = true
        return Effect.void
      }
      return Effect.zipRight(wait, loop)
    })
    const fiber = yield* Effect.forkDaemon(Effect.uninterruptible(loop))
    // When the scope closes: the fiber writes what is queued (jobs queued meanwhile too) and ends, whatever it
    // could not take (it died) is written here, then the owner's shutdown runs.
    const rest: Effect.Effect<void> = Effect.suspend(() => {
      shut = true
      return pending.length === 0 ? Effect.void : Effect.zipRight(options.step(pending.splice(0, maxBatch)), rest)
    })
    yield* Effect.addFinalizer(() =>
      Effect.zipRight(
        Effect.suspend(() => {
          closing = true
          notify()
          return Fiber.await(fiber)
        }),
        Effect.zipRight(rest, options.shutdown ?? Effect.void)
      )
    )

    const offer = (job: J) => Effect.sync(() => unsafeOffer(job))

    // The job queued and the caller suspended in one runtime operation, the reply a plain callback: it runs for
    // every record written (the trace, the session turn, the audit record of every turn), and a Deferred costs
    // microseconds to make (its object copies the Effect prototype's properties) and operations to await and
    // complete.
    const request = <A, E>(make: (done: Reply<A, E>) => J, closed: () => E) =>
      Effect.async<A, E>((resume) => {
        if (!unsafeOffer(make(resume))) resume(Effect.fail(closed()))
      })

    return { offer, request } satisfies GroupCommit<J>
  })
