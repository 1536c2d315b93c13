import { Context, Effect, Layer, Option } from "effect"
import type { AnsweringChannel } from "../../domain/ApprovalVia.js"
import { channelKind } from "../../domain/Channel.js"
import { ApprovalChannel } from "../../services/ApprovalChannel.js"
import { type ApprovalAsker, ApprovalRouter } from "../../services/ApprovalRouter.js"
import type { ApprovalAnswer, PendingApproval } from "../../services/Approvals.js"

const HINT = "set MYCLAW_ADMIN_TOKEN for the HTTP approvals API, or TELEGRAM_BOT_TOKEN for Telegram buttons"

/** The denial given when nobody at all can be asked. */
const noChannel = (pending: PendingApproval, kind: string): ApprovalAnswer => ({
  requestId: pending.requestId,
  nonce: pending.nonce,
  answerer: pending.request.requester,
  decision: { _tag: "Deny" },
  via: "no_channel",
  reason: `nobody can answer here: turns from ${kind} cannot ask for approval here and no answering channel is on ` +
    `(${HINT}), so the request is denied`
})

/** An asker's answer if it has one at hand; otherwise it waits (the answer comes through `Approvals.answer`). */
const answerOrWait = (asker: ApprovalAsker, pending: PendingApproval) =>
  Effect.flatMap(
    asker.present(pending),
    Option.match({ onNone: () => Effect.never, onSome: (answer) => Effect.succeed(Option.some(answer)) })
  )

/**
 * The router: the ApprovalChannel that Approvals asks, dispatching on the turn's channel kind to the asker
 * registered for it, else to every answering channel at once, else denying at once with the reason.
 */
export const makeApprovalRouter = Effect.sync(() => {
  const askers = new Map<string, Array<ApprovalAsker>>()
  const answering: Array<ApprovalAsker> = []

  const registered = <A>(list: Array<A>, item: A) =>
    Effect.acquireRelease(
      Effect.sync(() => void list.push(item)),
      () =>
        Effect.sync(() => {
          const i = list.lastIndexOf(item)
          if (i >= 0) list.splice(i, 1)
        })
    )

  const askerFor = (kind: string): ApprovalAsker | undefined => askers.get(kind)?.at(-1) ?? askers.get("*")?.at(-1)

  const present = (pending: PendingApproval): Effect.Effect<Option.Option<ApprovalAnswer>> => {
    const kind = channelKind(pending.request.channel)
    const own = askerFor(kind)
    if (own !== undefined) return own.present(pending)
    if (answering.length === 0) return Effect.succeed(Option.some(noChannel(pending, kind)))
    return Effect.raceAll(answering.map((asker) => answerOrWait(asker, pending)))
  }

  const mayAnswer = (answerer: string, requester: string): boolean =>
    answerer === requester ||
    answering.some((asker) => asker.owners.includes(answerer)) ||
    [...askers.values()].some((list) => list.some((asker) => asker.owners.includes(answerer)))

  const router = ApprovalRouter.of({
    askOn: (kind, asker) =>
      Effect.suspend(() => {
        const list = askers.get(kind) ?? []
        askers.set(kind, list)
        return registered(list, asker)
      }),
    answerFrom: (asker) => registered(answering, asker),
    answering: Effect.sync(() => [...new Set<AnsweringChannel>(answering.map((asker) => asker.via))])
  })
  return Context.make(ApprovalRouter, router).pipe(
    Context.add(ApprovalChannel, ApprovalChannel.of({ present, mayAnswer }))
  )
})

/** The approval router, as the ApprovalChannel of the graph; channels register on it while they run. */
export const ApprovalRouterLive = Layer.effectContext(makeApprovalRouter)
