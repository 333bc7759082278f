import { describe, expect, it } from "vitest";
import { checkWebhookUrl, isPrivateAddress } from "./url-policy.js";

describe("isPrivateAddress", () => {
  it.each([
    "127.0.0.1",
    "10.1.2.3",
    "172.16.0.1",
    "172.31.255.255",
    "192.168.1.1",
    "100.64.0.1",
    "169.254.169.254",
    "0.0.0.0",
    "0.1.2.3",
    "224.0.0.1",
    "255.255.255.255",
    "::1",
    "::",
    "fc00::1",
    "fd12:3456::1",
    "fe80::1",
    "::ffff:127.0.0.1",
    "::ffff:10.0.0.1",
  ])("refuses %s", (address) => expect(isPrivateAddress(address)).toBe(true));

  it.each(["8.8.8.8", "1.1.1.1", "172.32.0.1", "100.128.0.1", "2606:4700:4700::1111", "::ffff:8.8.8.8"])(
    "allows %s",
    (address) => expect(isPrivateAddress(address)).toBe(false),
  );
});

/**
 * Every way of writing an address that reaches this host or a private network: the URL
 * parser's shorthand IPv4 forms, IPv6 forms that carry an IPv4 address, and the ranges
 * themselves. Each is refused when the webhook is created.
 */
const REFUSED_URLS = [
  "http://127.0.0.1/",
  "http://127.1/",
  "http://0/",
  "http://0.0.0.0/",
  "http://2130706433/",
  "http://0x7f000001/",
  "http://0x7f.0.0.1/",
  "http://0177.0.0.1/",
  "http://017700000001/",
  "http://127.000.000.001/",
  "http://10.0.0.1/",
  "http://172.16.0.1/",
  "http://192.168.0.1/",
  "http://100.64.0.1/",
  "http://169.254.169.254/",
  "http://0xa9fea9fe/",
  "http://192.0.0.8/",
  "http://192.0.2.1/",
  "http://198.18.0.1/",
  "http://224.0.0.1/",
  "http://255.255.255.255/",
  "http://[::1]/",
  "http://[::]/",
  "http://[0:0:0:0:0:0:0:1]/",
  "http://[::127.0.0.1]/",
  "http://[::7f00:1]/",
  "http://[::10.0.0.1]/",
  "http://[::169.254.169.254]/",
  "http://[::ffff:127.0.0.1]/",
  "http://[::ffff:7f00:1]/",
  "http://[0:0:0:0:0:ffff:127.0.0.1]/",
  "http://[::ffff:10.0.0.1]/",
  "http://[::ffff:a9fe:a9fe]/",
  "http://[::ffff:0:127.0.0.1]/",
  "http://[64:ff9b::127.0.0.1]/",
  "http://[64:ff9b::8.8.8.8]/",
  "http://[64:ff9b:1::a00:1]/",
  "http://[2002:7f00:1::]/",
  "http://[2001:0:4136:e378:8000:63bf:3fff:fdd2]/",
  "http://[100::1]/",
  "http://[2001:db8::1]/",
  "http://[fc00::1]/",
  "http://[fd12:3456::1]/",
  "http://[fe80::1]/",
  "http://[fec0::1]/",
  "http://[ff02::1]/",
  "http://localhost/",
  "http://LOCALHOST./",
  "http://localhost:9/hook",
];

const ALLOWED_URLS = [
  "https://8.8.8.8/hook",
  "https://1.1.1.1/",
  "https://172.32.0.1/",
  "https://[2606:4700:4700::1111]/",
  "https://[::ffff:8.8.8.8]/",
  "https://[::ffff:808:808]/",
];

describe("the address forms of a webhook URL", () => {
  it.each(REFUSED_URLS)("refuses %s", async (url) => {
    await expect(checkWebhookUrl(url, false)).rejects.toMatchObject({ code: "request.invalid" });
  });

  it.each(ALLOWED_URLS)("allows %s", async (url) => {
    await expect(checkWebhookUrl(url, false)).resolves.toBeUndefined();
  });

  it.each(["fe80::1%eth0", "::ffff:127.0.0.1", "::FFFF:7F00:1", "not an address"])(
    "an address the resolver answers as %s is refused",
    (address) => expect(isPrivateAddress(address)).toBe(true),
  );
});

describe("checkWebhookUrl", () => {
  it("refuses a literal private address with a message saying the operator can allow it", async () => {
    await expect(checkWebhookUrl("http://127.0.0.1:8080/hook", false)).rejects.toMatchObject({
      code: "request.invalid",
      message: expect.stringContaining("CJS_WEBHOOKS_ALLOW_PRIVATE_URLS"),
    });
    await expect(checkWebhookUrl("http://[::1]/hook", false)).rejects.toMatchObject({ code: "request.invalid" });
    await expect(checkWebhookUrl("http://169.254.169.254/latest/meta-data", false)).rejects.toMatchObject({
      code: "request.invalid",
    });
  });

  it("refuses a host name that resolves to a private address", async () => {
    await expect(checkWebhookUrl("http://localhost:9/hook", false)).rejects.toMatchObject({
      code: "request.invalid",
      message: expect.stringContaining("resolves to a private"),
    });
  });

  it("allows a public literal address, and private ones when the operator allows them", async () => {
    await expect(checkWebhookUrl("https://8.8.8.8/hook", false)).resolves.toBeUndefined();
    await expect(checkWebhookUrl("http://127.0.0.1:8080/hook", true)).resolves.toBeUndefined();
  });

  it("refuses credentials in the URL", async () => {
    await expect(checkWebhookUrl("https://user:pw@8.8.8.8/hook", false)).rejects.toMatchObject({
      code: "request.invalid",
    });
  });
});
