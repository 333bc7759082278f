import { createTransport } from "nodemailer";
import type { GatewayConfig } from "./config.js";
import type { OtpSender } from "./gateway-context.js";

/** SMTP when configured; else the dev outbox on standard output when allowed; else none. */
export function otpSenderFromConfig(config: Readonly<GatewayConfig>): OtpSender | undefined {
  if (config.CJS_SMTP_URL) {
    const transport = createTransport(config.CJS_SMTP_URL);
    return async (to, code, purpose = "sign_in") => {
      const what = purpose === "sign_in" ? "sign-in code" : "code to set your password";
      await transport.sendMail({
        from: config.CJS_SMTP_FROM,
        to,
        subject: `Your ${what}: ${code}`,
        text: `Your one-time ${what} is ${code}. It expires in 10 minutes and works once.\n\nIf you did not ask for it, ignore this message.`,
      });
    };
  }
  if (config.CJS_DEV_OUTBOX) {
    return async (to, code, purpose = "sign_in") => {
      process.stdout.write(
        `[dev outbox] one-time ${purpose === "sign_in" ? "" : "password "}code for ${to}: ${code}\n`,
      );
    };
  }
  return undefined;
}
