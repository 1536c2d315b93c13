/**
 * Network hosts as the URL parser sees them: lower-case, without a trailing dot or a port, IPv4 literals in any
 * notation (`0x7f.1`, `2130706433`) in dotted decimal. Hosts are compared after this, never as substrings.
 */
export const canonicalHost = (text: string): string | undefined => {
  const trimmed = text.trim()
  if (trimmed === "") return undefined
  try {
    const url = new URL(/^[a-z][a-z0-9+.-]*:\/\//i.test(trimmed) ? trimmed : `http://${trimmed}`)
    const host = url.hostname.toLowerCase().replace(/\.$/, "")
    return host === "" ? undefined : host
  } catch {
    return undefined
  }
}

// A URL with any scheme, or a bare name with at least one dot (optionally `user@` before it, a port after), or an
// IPv6 literal in brackets.
const candidates =
  /[a-z][a-z0-9+.-]*:\/\/[^\s"'<>()]+|\[[0-9a-f:.]+\]|(?:[\w.%+-]+@)?(?:[\p{L}\p{N}_-]+\.)+[\p{L}\p{N}_-]+(?::\d+)?|\b(?:0x[0-9a-f]+|\d{8,10})\b/giu

/** Every host a text names, in any spelling the URL parser accepts: with or without a scheme, `user@host`, IPs. */
export const hostsIn = (text: string): ReadonlyArray<string> => {
  const hosts = new Set<string>()
  for (const match of text.matchAll(candidates)) {
    const token = match[0].replace(/[.,;:!?]+$/, "")
    const host = canonicalHost(token.includes("://") ? token : token.replace(/^[^@]*@/, ""))
    if (host !== undefined) hosts.add(host)
  }
  return [...hosts]
}
