import { lookup as dnsLookup, type LookupAddress } from "node:dns";
import { BlockList, isIP, type LookupFunction } from "node:net";
import { AppError } from "../../shared/errors/index.js";

/** Addresses a webhook may not reach: loopback, link-local (cloud metadata), private, shared (CGNAT), multicast and reserved ranges. */
const PRIVATE = new BlockList();
for (const [network, prefix] of [
  ["0.0.0.0", 8],
  ["10.0.0.0", 8],
  ["100.64.0.0", 10],
  ["127.0.0.0", 8],
  ["169.254.0.0", 16],
  ["172.16.0.0", 12],
  ["192.0.0.0", 24],
  ["192.168.0.0", 16],
  ["198.18.0.0", 15],
  ["224.0.0.0", 4],
  ["240.0.0.0", 4],
] as const) {
  PRIVATE.addSubnet(network, prefix, "ipv4");
}
for (const [network, prefix] of [
  ["::", 128],
  ["::1", 128],
  ["64:ff9b::", 96],
  ["fc00::", 7],
  ["fe80::", 10],
  ["ff00::", 8],
] as const) {
  PRIVATE.addSubnet(network, prefix, "ipv6");
}

/** Whether a literal IP address is one a webhook may not reach; an IPv4-mapped IPv6 address is judged as its IPv4 address. */
export function isPrivateAddress(address: string): boolean {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address)?.[1];
  if (mapped !== undefined) return PRIVATE.check(mapped, "ipv4");
  const family = isIP(address);
  if (family === 0) return true;
  return PRIVATE.check(address, family === 4 ? "ipv4" : "ipv6");
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
