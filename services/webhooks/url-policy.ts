import { lookup as dnsLookup, type LookupAddress } from "node:dns";
import { BlockList, isIP, type LookupFunction } from "node:net";
import { AppError } from "../../shared/errors/index.js";

/**
 * IPv4 networks a webhook may not reach: "this" network, private, shared (CGNAT),
 * loopback, link-local (cloud metadata), IETF protocol assignments, the documentation
 * networks, the 6to4 relay, benchmarking, multicast and reserved (broadcast included).
 */
const PRIVATE_V4 = [
  ["0.0.0.0", 8],
  ["10.0.0.0", 8],
  ["100.64.0.0", 10],
  ["127.0.0.0", 8],
  ["169.254.0.0", 16],
  ["172.16.0.0", 12],
  ["192.0.0.0", 24],
  ["192.0.2.0", 24],
  ["192.88.99.0", 24],
  ["192.168.0.0", 16],
  ["198.18.0.0", 15],
  ["198.51.100.0", 24],
  ["203.0.113.0", 24],
  ["224.0.0.0", 4],
  ["240.0.0.0", 4],
] as const;

/**
 * IPv6 networks a webhook may not reach. Besides loopback, unique-local, link-local,
 * site-local and multicast: every range that carries an IPv4 address a translator or a
 * tunnel may deliver to (IPv4-compatible `::/96`, which holds `::` and `::1` too; NAT64
 * `64:ff9b::/96` and `64:ff9b:1::/48`; Teredo `2001::/32`; 6to4 `2002::/16`), discard-only
 * `100::/64` and documentation `2001:db8::/32`. IPv4-mapped and IPv4-translated addresses
 * (`::ffff:0:0/96`, `::ffff:0:0:0/96`) are judged as the IPv4 address they carry.
 */
const PRIVATE_V6 = [
  ["::", 96],
  ["64:ff9b::", 96],
  ["64:ff9b:1::", 48],
  ["100::", 64],
  ["2001::", 32],
  ["2001:db8::", 32],
  ["2002::", 16],
  ["fc00::", 7],
  ["fe80::", 10],
  ["fec0::", 10],
  ["ff00::", 8],
] as const;

const PRIVATE_V4_LIST = new BlockList();
for (const [network, prefix] of PRIVATE_V4) PRIVATE_V4_LIST.addSubnet(network, prefix, "ipv4");
const PRIVATE_V6_LIST = new BlockList();
for (const [network, prefix] of PRIVATE_V6) PRIVATE_V6_LIST.addSubnet(network, prefix, "ipv6");

/** The 16 bytes of an IPv6 address text (`isIP` said 6; a zone is already cut off). */
function ipv6Bytes(address: string): number[] {
  let text = address.toLowerCase();
  const dotted = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (dotted) {
    const [a, b, c, d] = dotted.slice(1).map(Number) as [number, number, number, number];
    text = `${text.slice(0, dotted.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head = "", tail] = text.split("::");
  const groupsOf = (part: string) => (part === "" ? [] : part.split(":").map((group) => Number.parseInt(group, 16)));
  const front = groupsOf(head);
  const back = tail === undefined ? [] : groupsOf(tail);
  const groups = [...front, ...Array<number>(8 - front.length - back.length).fill(0), ...back];
  return groups.flatMap((group) => [group >> 8, group & 0xff]);
}

/** The IPv4 address an IPv4-mapped (`::ffff:a.b.c.d`) or IPv4-translated (`::ffff:0:a.b.c.d`) address carries. */
function embeddedIpv4(bytes: readonly number[]): string | undefined {
  const zeros = (from: number, to: number) => bytes.slice(from, to).every((byte) => byte === 0);
  const mapped = zeros(0, 10) && bytes[10] === 0xff && bytes[11] === 0xff;
  const translated = zeros(0, 8) && bytes[8] === 0xff && bytes[9] === 0xff && zeros(10, 12);
  return mapped || translated ? bytes.slice(12).join(".") : undefined;
}

/**
 * Whether a literal IP address is one a webhook may not reach (see the two lists above);
 * anything that is not an IP address is refused too.
 */
export function isPrivateAddress(address: string): boolean {
  const bare = address.split("%")[0] ?? "";
  const family = isIP(bare);
  if (family === 4) return PRIVATE_V4_LIST.check(bare, "ipv4");
  if (family !== 6) return true;
  const ipv4 = embeddedIpv4(ipv6Bytes(bare));
  if (ipv4 !== undefined) return PRIVATE_V4_LIST.check(ipv4, "ipv4");
  return PRIVATE_V6_LIST.check(bare, "ipv6");
}

const REFUSAL = "the operator can allow these with CJS_WEBHOOKS_ALLOW_PRIVATE_URLS";

/** The URL's host without IPv6 brackets. */
function hostOf(url: URL): string {
  return url.hostname.replace(/^\[(.*)\]$/, "$1");
}

function resolveAll(host: string): Promise<LookupAddress[]> {
  return new Promise((resolve, reject) =>
    dnsLookup(host, { all: true }, (error, addresses) => (error ? reject(error) : resolve(addresses))),
  );
}

/**
 * Checks a webhook URL when it is created: its host, a literal address or every address
 * its name resolves to now, must not be private (unless allowed). 400 `request.invalid`
 * saying why. The address actually connected to is checked again at each delivery
 * (`guardedLookup`), since a name may resolve elsewhere later.
 */
export async function checkWebhookUrl(text: string, allowPrivate: boolean): Promise<void> {
  const url = new URL(text);
  if (url.username !== "" || url.password !== "")
    throw new AppError("request.invalid", "A webhook URL may not carry credentials.", { details: { field: "url" } });
  if (allowPrivate) return;
  const host = hostOf(url);
  if (isIP(host) !== 0) {
    if (isPrivateAddress(host))
      throw new AppError(
        "request.invalid",
        `The webhook URL is a private, loopback or link-local address; ${REFUSAL}.`,
        { details: { field: "url" } },
      );
    return;
  }
  let addresses: LookupAddress[];
  try {
    addresses = await resolveAll(host);
  } catch {
    throw new AppError("request.invalid", `The webhook URL's host ${host} does not resolve.`, {
      details: { field: "url" },
    });
  }
  if (addresses.some(({ address }) => isPrivateAddress(address))) {
    throw new AppError(
      "request.invalid",
      `The webhook URL's host resolves to a private, loopback or link-local address; ${REFUSAL}.`,
      { details: { field: "url" } },
    );
  }
}

/**
 * A DNS lookup for the HTTP client that refuses private addresses: the address it returns
 * is the one connected to, so a name re-pointed after the URL was checked (DNS rebinding)
 * is caught at the connection itself.
 */
export function guardedLookup(allowPrivate: boolean): LookupFunction {
  return (hostname, options, callback) => {
    dnsLookup(hostname, { ...options, all: true }, (error, addresses) => {
      if (error) {
        callback(error, "", 0);
        return;
      }
      const list = addresses as unknown as LookupAddress[];
      const allowed = allowPrivate ? list : list.filter(({ address }) => !isPrivateAddress(address));
      const first = allowed[0];
      if (!first) {
        callback(
          Object.assign(new Error(`${hostname} resolves to a private address`), { code: "EPRIVATEADDRESS" }),
          "",
          0,
        );
        return;
      }
      if (options.all) (callback as unknown as (error: null, addresses: LookupAddress[]) => void)(null, allowed);
      else callback(null, first.address, first.family);
    });
  };
}
