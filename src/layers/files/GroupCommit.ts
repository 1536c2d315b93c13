import { Deferred, Effect, Queue } from "effect"

/**
 * One writer fiber behind a queue (group commit): callers offer jobs; the fiber takes everything queued as
 * one batch and runs `step` on it, uninterruptibly, so a batch is written whole or reported failed, and one
 * sync can cover every job of the batch. When the scope closes, the fiber stops, whatever is still queued is
 * written by a last drain, then `shutdown` runs; a job offered after that is refused.
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

export interface GroupCommitOptions<J> {
  readonly step: (batch: ReadonlyArray<J>) => Effect.Effect<void>
  readonly shutdown?: Effect.Effect<void>
  /** The most jobs one batch takes; 1 writes jobs one by one. */
  readonly maxBatch?: number
}

export const makeGroupCommit = <J>(options: GroupCommitOptions<J>) =>
  Effect.gen(function*() {
    const queue = yield* Effect.acquireRelease(Queue.unbounded<J>(), Queue.shutdown)
    const maxBatch = options.maxBatch ?? 10_000
    const drain: Effect.Effect<void> = Effect.flatMap(
      Queue.takeAll(queue),
      (rest) => rest.length === 0 ? Queue.shutdown(queue) : Effect.zipRight(options.step([...rest]), drain)
    )
    // Finalizers run in reverse: the fiber is interrupted between batches first, then the last drain writes
    // what is still queued and closes the queue, then the owner's shutdown runs.
    yield* Effect.addFinalizer(() => Effect.zipRight(drain, options.shutdown ?? Effect.void))
    // Taking and writing are one region: an interrupt may stop the wait for jobs, never drop jobs already taken
    // (their callers would wait for ever).
    yield* Effect.forkScoped(Effect.forever(
      Effect.uninterruptibleMask((restore) =>
        Effect.flatMap(restore(Queue.takeBetween(queue, 1, maxBatch)), (jobs) => options.step([...jobs]))
      )
    ))

    // Checked and offered in one synchronous stretch: a job is either taken by the last drain or refused.
    const offer = (job: J) =>
      Effect.flatMap(
        Queue.isShutdown(queue),
        (closed) => closed ? Effect.succeed(false) : Effect.as(Queue.offer(queue, job), true)
      )

    const request = <A, E>(make: (done: Deferred.Deferred<A, E>) => J, closed: () => E) =>
      Effect.flatMap(Deferred.make<A, E>(), (done) =>
        Effect.flatMap(
          offer(make(done)),
          (queued) => queued ? Deferred.await(done) : Effect.fail(closed())
        ))

    return { offer, request } satisfies GroupCommit<J>
  })
