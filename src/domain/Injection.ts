/**
 * Text in untrusted content that looks like an attempt to steer the model: it is never
 * executed (the content stays wrapped as data); it is recorded as `injection_suspected` for the owner.
 */
const patterns: ReadonlyArray<readonly [string, RegExp]> = [
  [
    "ignore previous instructions",
    /\b(ignore|disregard|forget)\s+(all\s+|any\s+)?(of\s+)?(the\s+|your\s+)?(previous|prior|above|earlier)\s+(instructions?|directions?|prompts?|rules?)/i
  ],
  // The same in Italian, Spanish, French, German and Portuguese, as read after folding (accents dropped).
  [
    "ignore previous instructions",
    /\b(ignora|dimentica|trascura)\s+(tutte\s+)?(le\s+)?(tue\s+)?istruzioni\s+(precedenti|ricevute|di\s+sistema)/i
  ],
  [
    "ignore previous instructions",
    /\b(ignora|olvida|descarta)\s+(todas\s+)?(las\s+)?(tus\s+)?instrucciones\s+(anteriores|previas)/i
  ],
  [
    "ignore previous instructions",
    /\b(ignore[zr]?|oublie[zr]?)\s+(toutes\s+)?(les\s+|tes\s+|vos\s+)?instructions\s+(precedentes|anterieures)/i
  ],
  [
    "ignore previous instructions",
    /\b(ignoriere|vergiss|missachte)\s+(alle\s+)?(deine\s+|die\s+)?(vorherigen|bisherigen|obigen|vorigen)\s+(anweisungen|instruktionen|befehle)/i
  ],
  [
    "ignore previous instructions",
    /\b(ignore|ignora|esqueca)\s+(todas\s+)?(as\s+)?(suas\s+)?instrucoes\s+(anteriores|previas)/i
  ],
  ["new instructions", /\b(new|updated|real)\s+(system\s+)?instructions\s*:/i],
  [
    "new instructions",
    /\b(nuove\s+istruzioni|nuevas\s+instrucciones|nouvelles\s+instructions|neue\s+anweisungen|novas\s+instrucoes)\s*:/i
  ],
  ["role marker", /(^|\n)\s*(system|assistant|developer)\s*:|<\|(im_start|system|assistant)\|>|\[\/?INST\]/i],
  ["tool-call syntax", /"tool_calls"\s*:|<\/?(tool_call|function_call)>|"function"\s*:\s*\{\s*"name"/i],
  ["forged untrusted tag", /[<\u2039\u3008\u27E8\u276E\u300A]\s*\\?[/\u2215\u2044]?\s*untrusted/i]
]

export interface Suspicion {
  readonly pattern: string
  /** The matching text with a little context, at most 160 characters. */
  readonly excerpt: string
}

/** The text as a reader sees it: compatibility forms folded, invisible and combining characters dropped. */
const folded = (content: string): string =>
  content.normalize("NFKD").replace(/[\p{Default_Ignorable_Code_Point}\p{M}]/gu, "").normalize("NFKC")

export const suspectInjection = (content: string): Suspicion | undefined => {
  const read = /[^\x00-\x7F]/.test(content) ? folded(content) : content
  for (const [pattern, regex] of patterns) {
    const match = regex.exec(read)
    if (match !== null) {
      const from = Math.max(0, match.index - 40)
      return { pattern, excerpt: read.slice(from, from + 160).replace(/\s+/g, " ").trim() }
    }
  }
  return undefined
}
