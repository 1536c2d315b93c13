/**
 * Text in untrusted content that looks like an attempt to steer the model: it is never
 * executed (the content stays wrapped as data); it is recorded as `injection_suspected` for the owner.
 */
const patterns: ReadonlyArray<readonly [string, RegExp]> = [
  [
    "ignore previous instructions",
    /\b(ignore|disregard|forget)\s+(all\s+|any\s+)?(of\s+)?(the\s+|your\s+)?(previous|prior|above|earlier)\s+(instructions?|directions?|prompts?|rules?)/i
  ],
  ["new instructions", /\b(new|updated|real)\s+(system\s+)?instructions\s*:/i],
  ["role marker", /(^|\n)\s*(system|assistant|developer)\s*:|<\|(im_start|system|assistant)\|>|\[\/?INST\]/i],
  ["tool-call syntax", /"tool_calls"\s*:|<\/?(tool_call|function_call)>|"function"\s*:\s*\{\s*"name"/i],
  ["forged untrusted tag", /[<\uFF1C\u2039\u3008\u27E8]\s*[/\uFF0F]?\s*untrusted/i]
]

export interface Suspicion {
  readonly pattern: string
  /** The matching text with a little context, at most 160 characters. */
  readonly excerpt: string
}

export const suspectInjection = (content: string): Suspicion | undefined => {
  for (const [pattern, regex] of patterns) {
    const match = regex.exec(content)
    if (match !== null) {
      const from = Math.max(0, match.index - 40)
      return { pattern, excerpt: content.slice(from, from + 160).replace(/\s+/g, " ").trim() }
    }
  }
  return undefined
}
