import { Chunk, Deferred, Effect, Fiber, Queue } from "effect"

/**
 * One writer fiber behind a queue (group commit): callers offer jobs; the fiber takes everything queued as
 * one batch and runs `step` on it, uninterruptibly, so a batch is written whole or reported failed, and one
 * sync can cover every job of the batch. When the scope closes, the fiber stops after its batch, whatever is
 * still queued is written by a last drain, then `shutdown` runs; a job offered after that is refused.
 */
export interface GroupCommit<J> {
  /** Queues a job; false when the writer has closed (nothing was queued). */
  readonly offer: (job: J) => Effect.Effect<boolean>
  /**
   * Queues the job built around a fresh `done` and waits for the writer to complete it; `closed` is the
   * failure when the writer has already closed.
   */
  readonly request: <A, E>(
    make: (done: Deferred.Deferred<A, E>) => J,
    closed: () => E
  ) => Effect.Effect<A, E>
}

/** Queued by the close of the scope: the writer fiber ends once it has taken it. */
const STOP: unique symbol = Symbol("GroupCommit/stop")
type Item<J> = J | typeof STOP

export interface GroupCommitOptions<J> {
  readonly step: (batch: ReadonlyArray<J>) => Effect.Effect<void>
  readonly shutdown?: Effect.Effect<void>
  /** The most jobs one batch takes; 1 writes jobs one by one. */
  readonly maxBatch?: number
}

export const makeGroupCommit = <J>(options: GroupCommitOptions<J>) =>
  Effect.gen(function*() {
    const queue = yield* Effect.acquireRelease(Queue.unbounded<Item<J>>(), Queue.shutdown)
    const maxBatch = options.maxBatch ?? 10_000
    const jobsOf = (items: Iterable<Item<J>>) => {
      const jobs: Array<J> = []
      for (const item of items) if (item !== STOP) jobs.push(item)
      return jobs
    }
    const drain: Effect.Effect<void> = Effect.flatMap(Queue.takeAll(queue), (items) => {
      const rest = jobsOf(items)
      return items.length === 0 ? Queue.shutdown(queue) : Effect.zipRight(
        rest.length === 0 ? Effect.void : options.step(rest),
        drain
      )
    })
    // The writer fiber stops when it takes STOP, never by interruption: an interrupt that reaches it while a
    // step runs a finalizer (a file or a lock released) can be lost, when that step had joined a fiber that was
    // interrupted, and the fiber would then wait for jobs for ever, holding up the close of the scope.
    const loop: Effect.Effect<void> = Effect.flatMap(Queue.takeBetween(queue, 1, maxBatch), (items) => {
      const jobs = jobsOf(items)
      const stopped = jobs.length < Chunk.size(items)
      return Effect.zipRight(
        jobs.length === 0 ? Effect.void : options.step(jobs),
        stopped ? Effect.void : Effect.suspend(() => loop)
      )
    })
    // Finalizers run in reverse: the fiber is told to stop and ends after the batch it is writing (and the jobs
    // taken with STOP), then the last drain writes what is still queued and closes the queue, then the owner's
    // shutdown runs.
    yield* Effect.addFinalizer(() => Effect.zipRight(drain, options.shutdown ?? Effect.void))
    // Taking and writing are uninterruptible: jobs already taken are never dropped (their callers would wait
    // for ever).
    const fiber = yield* Effect.forkDaemon(Effect.uninterruptible(loop))
    yield* Effect.addFinalizer(() => Effect.zipRight(Queue.offer(queue, STOP), Fiber.await(fiber)))

    // Checked and offered in one synchronous stretch (an unbounded queue refuses a job only once it is shut
    // down): a job is either taken by the last drain or refused.
    const offer = (job: J) => Effect.sync(() => Queue.unsafeOffer(queue, job))

    // The caller's wait made, its job queued and the wait begun in one runtime operation: it runs for every
    // record written (the trace, the session turn, the audit record of every turn).
    const request = <A, E>(make: (done: Deferred.Deferred<A, E>) => J, closed: () => E) =>
      Effect.withFiberRuntime<A, E>((fiber) => {
        const done = Deferred.unsafeMake<A, E>(fiber.id())
        return Queue.unsafeOffer(queue, make(done)) ? Deferred.await(done) : Effect.fail(closed())
      })

    return { offer, request } satisfies GroupCommit<J>
  })
