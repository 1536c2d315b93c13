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

/** Where a host or URL token ends in running text. */
const separators = /[\s"'<>(){}|`^,;!\\]+/u
const bareHost = /^[\p{L}\p{N}_-]+(?:\.[\p{L}\p{N}_-]+)+\.?(?::\d{1,5})?$/u
const bracketed = /^\[[0-9a-f:.]+\](?::\d{1,5})?$/i
const numericIp = /^(?:0x[0-9a-f]{1,8}|\d{8,10})$/i

/**
 * Every host a text names, in any spelling the URL parser accepts: a URL with any scheme, a bare name with a dot,
 * `user@host`, a port, IPv4 in any notation, IPv6 in brackets. Linear in the text: it is cut into tokens first.
 */
export const hostsIn = (text: string): ReadonlyArray<string> => {
  const hosts = new Set<string>()
  for (const raw of text.split(separators)) {
    const token = raw.replace(/[.:?]+$/, "")
    if (token === "" || token.length > 4096) continue
    let host: string | undefined
    if (token.includes("://")) {
      host = canonicalHost(token)
    } else {
      const authority = token.slice(token.lastIndexOf("@") + 1).split(/[/?#]/, 1)[0]!
      if (bareHost.test(authority) || bracketed.test(authority) || numericIp.test(authority)) {
        host = canonicalHost(authority)
      }
    }
    if (host !== undefined) hosts.add(host)
  }
  return [...hosts]
}
