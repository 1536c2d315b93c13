import { Effect } from "effect"
import { createServer, type IncomingMessage, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"

/** One Bot API call the bot made: the method and its JSON parameters. */
export interface Call {
  readonly method: string
  readonly payload: Record<string, unknown>
}

export const TOKEN = "123456:TEST-fake-token"
export const OWNER = { id: 437015518, is_bot: false, first_name: "Max", username: "Mark_Heizenberg" }
export const STRANGER = { id: 999000111, is_bot: false, first_name: "Eve", username: "eve_stranger" }

/** A local Bot API server: getUpdates with offsets and long polling, and the methods the channel calls. */
export interface FakeBotApi {
  readonly apiRoot: string
  readonly calls: Array<Call>
  /** Adds an update (its update_id assigned in order unless given) for getUpdates to hand out. */
  readonly push: (update: Record<string, unknown>) => number
  /** Waits for the `count`-th call matching (counting those already made). */
  readonly awaitCall: (match: (call: Call) => boolean, count?: number) => Effect.Effect<Call>
  readonly sent: (method: string) => ReadonlyArray<Call>
  /** The next call of `method` gets this error answer (status and Bot API body). */
  readonly failNext: (method: string, status: number, body: Record<string, unknown>) => void
  /** While on, getUpdates requests (those held already and new ones) are never answered; other methods still are. */
  stallGetUpdates: boolean
  /** Offsets asked by getUpdates, in order. */
  readonly offsets: Array<number | undefined>
  /** Files served under /file/bot<token>/<path>. */
  readonly files: Map<string, Buffer>
}

const json = (res: ServerResponse, status: number, body: unknown) => {
  res.writeHead(status, { "content-type": "application/json" })
  res.end(JSON.stringify(body))
}

const readBody = (req: IncomingMessage) =>
  new Promise<string>((resolve) => {
    const chunks: Array<Buffer> = []
    req.on("data", (chunk: Buffer) => chunks.push(chunk))
    req.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")))
  })

/** Starts the fake server on 127.0.0.1 (ephemeral port) for the scope. */
export const FakeBotApi = Effect.acquireRelease(
  Effect.async<{ fake: FakeBotApi; close: () => void }>((resume) => {
    const updates: Array<Record<string, unknown>> = []
    const waiting: Array<{ offset: number; res: ServerResponse }> = []
    const listeners: Array<() => void> = []
    const failures = new Map<string, Array<{ status: number; body: Record<string, unknown> }>>()
    let nextUpdateId = 429536642
    let nextMessageId = 1000

    const pendingFrom = (offset: number) => updates.filter((u) => (u.update_id as number) >= offset)

    const flush = () => {
      if (fake.stallGetUpdates) return
      for (const waiter of waiting.splice(0)) {
        const ready = pendingFrom(waiter.offset)
        if (ready.length > 0 && !waiter.res.writableEnded) json(waiter.res, 200, { ok: true, result: ready })
        else waiting.push(waiter)
      }
    }

    const fake: FakeBotApi = {
      apiRoot: "",
      calls: [],
      offsets: [],
      files: new Map(),
      stallGetUpdates: false,
      push: (update) => {
        const id = typeof update.update_id === "number" ? update.update_id : nextUpdateId++
        updates.push({ update_id: id, ...update })
        flush()
        return id
      },
      sent: (method) => fake.calls.filter((call) => call.method === method),
      failNext: (method, status, body) => {
        const list = failures.get(method) ?? []
        list.push({ status, body })
        failures.set(method, list)
      },
      awaitCall: (match, count = 1) =>
        Effect.async<Call>((resume) => {
          const check = () => {
            const matching = fake.calls.filter(match)
            if (matching.length >= count) {
              resume(Effect.succeed(matching[count - 1]!))
              return true
            }
            return false
          }
          if (check()) return
          const listener = () => {
            if (check()) listeners.splice(listeners.indexOf(listener), 1)
          }
          listeners.push(listener)
          return Effect.sync(() => {
            const i = listeners.indexOf(listener)
            if (i >= 0) listeners.splice(i, 1)
          })
        })
    }

    const resultOf = (method: string, payload: Record<string, unknown>): unknown => {
      switch (method) {
        case "sendMessage":
          return {
            message_id: nextMessageId++,
            date: 1602575048,
            chat: { id: payload.chat_id, type: "private" },
            text: payload.text
          }
        case "editMessageText":
          return { message_id: payload.message_id, date: 1602575048, chat: { id: payload.chat_id, type: "private" } }
        case "getFile": {
          const path = `documents/${String(payload.file_id)}`
          return {
            file_id: payload.file_id,
            file_unique_id: "u",
            file_size: fake.files.get(path)?.length,
            file_path: path
          }
        }
        case "getMe":
          return { id: 1, is_bot: true, first_name: "myclaw", username: "myclaw_test_bot" }
        default:
          return true
      }
    }

    const server = createServer((req, res) => {
      void (async () => {
        const url = req.url ?? ""
        const file = /^\/file\/bot[^/]+\/(.+)$/.exec(url)
        if (file !== null) {
          const content = fake.files.get(decodeURIComponent(file[1]!))
          if (content === undefined) return json(res, 404, { ok: false, error_code: 404, description: "Not Found" })
          res.writeHead(200, { "content-type": "application/octet-stream" })
          return res.end(content)
        }
        const match = /^\/bot([^/]+)\/(\w+)$/.exec(url)
        const text = await readBody(req)
        if (match === null || match[1] !== TOKEN) {
          return json(res, 401, { ok: false, error_code: 401, description: "Unauthorized" })
        }
        const method = match[2]!
        const payload = text === "" ? {} : JSON.parse(text) as Record<string, unknown>
        fake.calls.push({ method, payload })
        if (method === "getUpdates") fake.offsets.push(typeof payload.offset === "number" ? payload.offset : undefined)
        for (const listener of listeners.slice()) listener()
        const failure = failures.get(method)?.shift()
        if (failure !== undefined) return json(res, failure.status, failure.body)
        // The Bot API's own checks of a text: blank once trimmed, over 4096 characters, or holding half of a
        // surrogate pair (not UTF-8 once decoded), is refused.
        if ((method === "sendMessage" || method === "editMessageText") && typeof payload.text === "string") {
          if (!payload.text.isWellFormed()) {
            return json(res, 400, {
              ok: false,
              error_code: 400,
              description: "Bad Request: text must be encoded in UTF-8"
            })
          }
          if (payload.text.trim() === "") {
            return json(res, 400, { ok: false, error_code: 400, description: "Bad Request: message text is empty" })
          }
          if (payload.text.length > 4096) {
            return json(res, 400, { ok: false, error_code: 400, description: "Bad Request: message is too long" })
          }
        }
        if (method === "getUpdates") {
          const offset = typeof payload.offset === "number" ? payload.offset : 0
          if (fake.stallGetUpdates) return // held until the client gives up or the server closes
          const ready = pendingFrom(offset)
          if (ready.length > 0) return json(res, 200, { ok: true, result: ready })
          const waiter = { offset, res }
          waiting.push(waiter)
          req.on("close", () => {
            const i = waiting.indexOf(waiter)
            if (i >= 0) waiting.splice(i, 1)
          })
          return
        }
        return json(res, 200, { ok: true, result: resultOf(method, payload) })
      })()
    })
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as AddressInfo
      Object.assign(fake, { apiRoot: `http://127.0.0.1:${port}` })
      resume(Effect.succeed({
        fake,
        close: () => {
          server.closeAllConnections()
          server.close()
        }
      }))
    })
  }),
  ({ close }) => Effect.sync(close)
).pipe(Effect.map(({ fake }) => fake))

/** A private text message from `from`, shaped like the Bot API's (and the recorded fixtures'). */
export const textMessage = (from: typeof OWNER, text: string, messageId = 1) => ({
  message: {
    message_id: messageId,
    from: { ...from, language_code: "en" },
    chat: { id: from.id, first_name: from.first_name, username: from.username, type: "private" },
    date: 1602575048,
    text,
    ...(text.startsWith("/")
      ? { entities: [{ offset: 0, length: text.split(" ")[0]!.length, type: "bot_command" }] }
      : {})
  }
})

let pressIds = 0

/** A press on an inline button of `messageId` in the presser's private chat. */
export const buttonPress = (from: typeof OWNER, data: string, messageId: number, chatId = from.id) => ({
  callback_query: {
    id: `cb-${++pressIds}`,
    from,
    chat_instance: "-1",
    data,
    message: { message_id: messageId, date: 1602575048, chat: { id: chatId, type: "private" }, text: "..." }
  }
})
