import type { Message } from "./LlmTypes.js"

/**
 * A value folded over a turn's messages (the text its fingerprint hashes, its length), kept from one Thought to
 * the next. A turn's messages only grow, and each message object is kept from one Thought to the next: `of` folds
 * only the messages added since the last list it was given, when the new list begins with that list's objects.
 * Any other list (a compacted turn, another turn's messages) is folded from the start: the value never depends on
 * what was folded before. No weak map: a turn's fold is dropped with the turn.
 */
export class MessagesFold<A> {
  private messages: ReadonlyArray<Message> = []
  private value: A
  private readonly initial: A
  private readonly step: (value: A, message: Message, index: number) => A

  constructor(initial: A, step: (value: A, message: Message, index: number) => A) {
    this.initial = initial
    this.step = step
    this.value = initial
  }

  /** The fold of `messages`, from `initial`, one `step` per message in order. */
  of(messages: ReadonlyArray<Message>): A {
    const from = this.extendedBy(messages) ? this.messages.length : 0
    let value = from === 0 ? this.initial : this.value
    for (let i = from; i < messages.length; i++) value = this.step(value, messages[i]!, i)
    this.messages = messages
    this.value = value
    return value
  }

  /** Whether `messages` begins with the last list folded, the same objects. */
  private extendedBy(messages: ReadonlyArray<Message>): boolean {
    const known = this.messages
    if (known.length > messages.length) return false
    for (let i = 0; i < known.length; i++) {
      if (known[i] !== messages[i]) return false
    }
    return true
  }
}
