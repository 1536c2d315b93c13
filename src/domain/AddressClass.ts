import ipaddr from "ipaddr.js"

type Address = ipaddr.IPv4 | ipaddr.IPv6

/** Whether `entry` is an IP address or a CIDR range (`10.0.0.0/8`, `fd00::/8`). */
export const isAddressOrRange = (entry: string): boolean => ipaddr.isValid(entry) || ipaddr.isValidCIDR(entry)

/** Parses an address the way the resolver or the URL parser wrote it (IPv6 with or without brackets). */
const parse = (text: string): Address | undefined => {
  const bare = text.startsWith("[") && text.endsWith("]") ? text.slice(1, -1) : text
  if (ipaddr.IPv4.isValidFourPartDecimal(bare)) return ipaddr.IPv4.parse(bare)
  return ipaddr.IPv6.isValid(bare) ? ipaddr.IPv6.parse(bare) : undefined
}

/** Whether `host` (as the URL parser gives it) is an IP literal rather than a name to resolve. */
export const isIpLiteral = (host: string): boolean => parse(host) !== undefined

const within = (address: Address, entry: string): boolean => {
  if (ipaddr.isValidCIDR(entry)) {
    const range = ipaddr.parseCIDR(entry)
    return address.kind() === range[0].kind() && address.match(range)
  }
  const single = parse(entry)
  return single !== undefined && single.kind() === address.kind() &&
    single.toNormalizedString() === address.toNormalizedString()
}

/**
 * Why an address may not be reached, or undefined when it may: only public unicast addresses pass (loopback,
 * private, link-local, unique-local, unspecified, IPv4-mapped IPv6, and every other special range do not),
 * unless an entry of `allowed` names the address or a range holding it.
 */
export const forbiddenAddress = (text: string, allowed: ReadonlyArray<string>): string | undefined => {
  const address = parse(text)
  if (address === undefined) return `${text} is not an IP address`
  if (allowed.some((entry) => within(address, entry))) return undefined
  const range = address.range()
  return range === "unicast" ? undefined : `${text} is a ${rangeName(range)} address`
}

const rangeName = (range: string): string =>
  ({
    loopback: "loopback",
    private: "private",
    linkLocal: "link-local",
    uniqueLocal: "unique-local",
    unspecified: "unspecified",
    ipv4Mapped: "IPv4-mapped IPv6",
    carrierGradeNat: "carrier-grade NAT",
    multicast: "multicast",
    broadcast: "broadcast"
  })[range] ?? `non-public (${range})`

/**
 * Why the host of a URL is spelled in a form that hides an IPv4 address (decimal `2130706433`, hex `0x7f.1`,
 * octal `017700000001`, fewer than four parts), or undefined. `raw` is the URL as written: the URL parser
 * rewrites these forms, so only the original text shows them.
 */
export const obscuredIpv4 = (raw: string): string | undefined => {
  const authority = /^[a-z][a-z0-9+.-]*:\/\/([^/?#]*)/i.exec(raw.trim())?.[1]
  if (authority === undefined) return undefined
  const hostPort = authority.slice(authority.lastIndexOf("@") + 1)
  if (hostPort.startsWith("[")) return undefined
  const host = hostPort.replace(/:\d*$/, "").replace(/\.$/, "").toLowerCase()
  const last = host.split(".").pop() ?? ""
  if (!/^(?:\d+|0x[0-9a-f]*)$/.test(last)) return undefined
  return ipaddr.IPv4.isValidFourPartDecimal(host) && !/(?:^|\.)0\d/.test(host)
    ? undefined
    : `the host ${host} is an IPv4 address in a non-standard form (write it as four decimal numbers)`
}
