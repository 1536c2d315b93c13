import { Clock, Duration, Effect, Option } from "effect"
import type { InlineKeyboardMarkup } from "grammy/types"
import { truncateEnd, visible } from "../../domain/Text.js"
import type { ApprovalAsker } from "../../services/ApprovalRouter.js"
import type { AnswerOutcome, ApprovalAnswer, ApprovalDecision, PendingApproval } from "../../services/Approvals.js"
import type { Outbox } from "./Outbox.js"
import type { TgCallbackQuery } from "./Updates.js"

/** Button data: `ap:<nonce>:<y|n|b>` (once, deny, for 10 minutes), well under Telegram's 64 bytes. */
const buttonData = /^ap:([0-9a-f]{16,48}):([ynb])$/

const decisions: Record<string, ApprovalDecision> = {
  y: { _tag: "Once" },
  n: { _tag: "Deny" },
  b: { _tag: "ForMinutes", minutes: 10 }
}

const verdicts: Record<string, string> = {
  y: "✅ Approved once",
  n: "❌ Denied",
  b: "✅ Approved for 10 minutes (same tool, same target)"
}

const keyboardFor = (nonce: string): InlineKeyboardMarkup => ({
  inline_keyboard: [
    [{ text: "Approve", callback_data: `ap:${nonce}:y` }, { text: "Deny", callback_data: `ap:${nonce}:n` }],
    [{ text: "Approve for 10 minutes", callback_data: `ap:${nonce}:b` }]
  ]
})

/** Control, bidirectional and format characters shown escaped: what the owner sees is what is approved. */
const printable = (text: string, max: number): string => truncateEnd(visible(text), max)

/** The question: action, target, consequences, where the turn came from, and how long it stays open. */
export const describeForTelegram = (pending: PendingApproval, now: number, forwarded: boolean): string => {
  const { request } = pending
  return [
    "🔐 myclaw asks for approval",
    ...(forwarded ? [`from: ${printable(request.channel, 200)} (session ${printable(request.sessionId, 200)})`] : []),
    `action: ${printable(request.summary, 300)}`,
    `tool: ${printable(request.tool, 100)}${request.target ? ` on ${printable(request.target, 300)}` : ""}`,
    `why: ${printable(request.reason, 300)}`,
    `args: ${printable(JSON.stringify(request.args) ?? "undefined", 1500)}`,
    ...(request.tainted === null
      ? []
      : [`⚠️ This follows untrusted content from: ${printable(request.tainted.sources.join(", "), 300)}`]),
    `expires in ${Math.max(0, Math.round((pending.expiresAt - now) / 1000))} s`
  ].join("\n")
}

interface Shown {
  readonly pending: PendingApproval
  readonly text: string
  readonly messages: Array<{ readonly chatId: number; readonly messageId: number }>
  /** A press is being answered: the press, not the expiry, edits the messages. */
  claimed: boolean
}

export interface TelegramApprovalsDeps {
  readonly out: Outbox
  readonly answer: (answer: ApprovalAnswer) => Effect.Effect<AnswerOutcome>
  /** The chat a turn's channel (`telegram:@alice`) talks in, while it runs. */
  readonly chatOf: (channel: string) => number | undefined
  /** The owners' private chats (their user ids), where requests of other channels' turns go. */
  readonly ownerChats: () => ReadonlyArray<number>
  /** How a presser names themselves: the same form as their turns' channel. */
  readonly identityOf: (user: TgCallbackQuery["from"]) => string
}

/**
 * Approval requests as messages with inline buttons bound to the request's nonce. A press counts once, from the
 * requesting owner, for a pending request, before expiry (the approvals service judges; a refused press changes
 * nothing and is told "expired"); the buttons then go and the message shows the verdict.
 */
export const makeTelegramApprovals = (deps: TelegramApprovalsDeps) => {
  const shown = new Map<string, Shown>()

  const editAll = (entry: Shown, line: string) =>
    Effect.forEach(
      entry.messages,
      (message) => deps.out.edit(message.chatId, message.messageId, `${entry.text}\n\n${line}`),
      { discard: true }
    )

  /** Sends the question to `chats`, then waits (the answer comes by a press); when it ends unanswered here, says so. */
  const show = (pending: PendingApproval, chats: ReadonlyArray<number>, forwarded: boolean) =>
    Effect.gen(function*() {
      const text = describeForTelegram(pending, yield* Clock.currentTimeMillis, forwarded)
      const entry: Shown = { pending, text, messages: [], claimed: false }
      shown.set(pending.nonce, entry)
      for (const chatId of chats) {
        const sent = yield* Effect.either(deps.out.sendOne(chatId, text, keyboardFor(pending.nonce)))
        if (sent._tag === "Right") entry.messages.push({ chatId, messageId: sent.right })
        else yield* Effect.logWarning(`telegram: cannot ask for approval in chat ${chatId}: ${sent.left.message}`)
      }
      return entry
    }).pipe(
      Effect.flatMap((entry) => entry.messages.length === 0 ? Effect.succeed(false) : Effect.never),
      Effect.onExit(() =>
        Effect.suspend(() => {
          const entry = shown.get(pending.nonce)
          shown.delete(pending.nonce)
          return entry === undefined || entry.claimed
            ? Effect.void
            : editAll(entry, "⌛ No longer pending: expired, or answered elsewhere.").pipe(
              Effect.timeout(Duration.seconds(10)),
              Effect.ignore
            )
        })
      )
    )

  const couldNotAsk = (pending: PendingApproval, why: string): ApprovalAnswer => ({
    requestId: pending.requestId,
    nonce: pending.nonce,
    answerer: pending.request.requester,
    decision: { _tag: "Deny" },
    via: "no_channel",
    reason: why
  })

  /** The asker for turns of Telegram chats: the question goes to the chat of the turn. */
  const asker = (owners: ReadonlyArray<string>): ApprovalAsker => ({
    via: "telegram",
    owners,
    present: (pending) => {
      const chatId = deps.chatOf(pending.request.channel)
      if (chatId === undefined) {
        return Effect.succeed(Option.some(couldNotAsk(pending, "no Telegram chat is open for this turn's channel")))
      }
      return Effect.map(
        show(pending, [chatId], false),
        () => Option.some(couldNotAsk(pending, "the question could not be sent to the Telegram chat"))
      )
    }
  })

  /** The answering channel for turns of channels that cannot ask (HTTP): the question goes to the owners' chats. */
  const answering = (owners: ReadonlyArray<string>): ApprovalAsker => ({
    via: "telegram",
    owners,
    present: (pending) =>
      Effect.zipRight(show(pending, deps.ownerChats(), true), Effect.never).pipe(Effect.as(Option.none()))
  })

  /** A button press: answered always (Telegram shows a spinner until then); only a valid one changes anything. */
  const press = (query: TgCallbackQuery) =>
    Effect.gen(function*() {
      const match = buttonData.exec(query.data ?? "")
      if (match === null) {
        yield* Effect.logWarning(`telegram: ignored a button press with unknown data from user ${query.from.id}`)
        return yield* deps.out.answerCallback(query.id, "Unknown button")
      }
      const [, nonce, choice] = match as unknown as [string, string, string]
      const entry = shown.get(nonce)
      if (entry === undefined || entry.claimed) {
        yield* Effect.logInfo(`telegram: a press on a request that is not pending, from user ${query.from.id}`)
        return yield* deps.out.answerCallback(query.id, "expired")
      }
      const identity = deps.identityOf(query.from)
      const answerer = identity === entry.pending.request.requester ? identity : `telegram:${query.from.id}`
      entry.claimed = true
      const outcome = yield* deps.answer({
        requestId: entry.pending.requestId,
        nonce,
        answerer,
        decision: decisions[choice]!,
        via: "telegram",
        ...(choice === "n" ? { reason: "denied on Telegram" } : {})
      })
      if (!outcome.accepted) {
        entry.claimed = false
        yield* Effect.logInfo(`telegram: a press from user ${query.from.id} was refused (${outcome.reason})`)
        yield* deps.out.answerCallback(query.id, "expired")
        // The request ended while this press was judged: nobody else will take its buttons away.
        if (!shown.has(nonce)) yield* editAll(entry, "⌛ No longer pending: expired, or answered elsewhere.")
        return
      }
      yield* deps.out.answerCallback(query.id, verdicts[choice]!)
      yield* editAll(entry, `${verdicts[choice]!} by ${identity}`)
    })

  return { asker, answering, press } as const
}
