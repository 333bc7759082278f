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
