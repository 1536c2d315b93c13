import type { Message } from "./LlmTypes.js"
import { MESSAGE_HASH_DIGITS, messageHash } from "./RequestFingerprint.js"
import { messageChars } from "./Tokens.js"

/**
 * What the Thoughts of one turn compute from each message it sends, computed once per message: the hashes its
 * request's fingerprint is made of, and the characters the compaction check counts. Between two Thoughts a
 * turn's messages grow at the end (compaction replaces a part of them): they are compared with the previous
 * ones by identity, position by position, and only those after the common prefix are computed.
 * One per turn, dropped with it: a cache shared by every turn (a WeakMap keyed by the messages) keeps a table as
 * large as all the messages created between two full collections of the heap.
 */
export class MessageMemo {
  private seen: ReadonlyArray<Message> = []
  /** The hashes of `seen`, comma-joined: what the messages' hash is the hash of. */
  private joined = ""
  /** For each message of `seen`, the characters of it and of those before it. */
  private ends: Array<number> = []

  /** The hashes of the messages, comma-joined. */
  hashes(messages: ReadonlyArray<Message>): string {
    this.sync(messages)
    return this.joined
  }

  /** The characters of all the messages (as the token estimate counts them). */
  chars(messages: ReadonlyArray<Message>): number {
    this.sync(messages)
    return this.ends.length === 0 ? 0 : this.ends[this.ends.length - 1]!
  }

  private sync(messages: ReadonlyArray<Message>): void {
    if (messages === this.seen) return
    const common = Math.min(this.seen.length, messages.length)
    let same = 0
    while (same < common && messages[same] === this.seen[same]) same++
    // Exactly as long as the messages: a parked turn holds this array.
    const ends = new Array<number>(messages.length)
    for (let i = 0; i < same; i++) ends[i] = this.ends[i]!
    let joined = same === 0 ? "" : this.joined.slice(0, same * (MESSAGE_HASH_DIGITS + 1) - 1)
    let total = same === 0 ? 0 : this.ends[same - 1]!
    for (let i = same; i < messages.length; i++) {
      const message = messages[i]!
      joined = i === 0 ? messageHash(message) : `${joined},${messageHash(message)}`
      total += messageChars(message)
      ends[i] = total
    }
    this.seen = messages
    this.joined = joined
    this.ends = ends
  }
}
