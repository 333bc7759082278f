import { useState } from "preact/hooks";
import { ErrorNote } from "../components/error-note.js";
import { rememberedAppId, requestCode, sessionEndedByService, signInWithCode, signInWithPassword } from "../session.js";
import { useAction } from "../use-async.js";

/** Sign in with e-mail and password, or with a one-time code sent by e-mail. */
export function SignInPage() {
  const [method, setMethod] = useState<"password" | "code">("password");
  const [appId, setAppId] = useState(rememberedAppId());
  const [email, setEmail] = useState("");
  const [password, setPassword] = useState("");
  const [code, setCode] = useState("");
  const [codeSent, setCodeSent] = useState(false);
  const action = useAction();

  const submit = (event: Event) => {
    event.preventDefault();
    void action.run(async () => {
      if (method === "password") await signInWithPassword(appId.trim(), email.trim(), password);
      else if (!codeSent) {
        await requestCode(appId.trim(), email.trim());
        setCodeSent(true);
      } else await signInWithCode(appId.trim(), email.trim(), code.trim());
    });
  };

  return (
    <main class="narrow">
      <h1>Sign in</h1>
      {sessionEndedByService() ? (
        <p class="hint" role="status">
          Your session has ended (signed out elsewhere, or revoked): sign in again to go on.
        </p>
      ) : null}
      <div class="tabs" role="group" aria-label="Sign-in method">
        <button type="button" aria-pressed={method === "password"} onClick={() => setMethod("password")}>
          Password
        </button>
        <button type="button" aria-pressed={method === "code"} onClick={() => setMethod("code")}>
          One-time code
        </button>
      </div>
      <form class="stack" onSubmit={submit}>
        <label>
          App ID
          <input
            name="app_id"
            required
            value={appId}
            onInput={(e) => setAppId(e.currentTarget.value)}
            autocomplete="organization"
          />
        </label>
        <label>
          E-mail
          <input
            name="email"
            type="email"
            required
            value={email}
            onInput={(e) => setEmail(e.currentTarget.value)}
            autocomplete="username"
          />
        </label>
        {method === "password" ? (
          <label>
            Password
            <input
              name="password"
              type="password"
              required
              value={password}
              onInput={(e) => setPassword(e.currentTarget.value)}
              autocomplete="current-password"
            />
          </label>
        ) : codeSent ? (
          <label>
            Code from the e-mail
            <input
              name="code"
              inputMode="numeric"
              pattern="[0-9]{6}"
              required
              value={code}
              onInput={(e) => setCode(e.currentTarget.value)}
              autocomplete="one-time-code"
            />
          </label>
        ) : null}
        <button type="submit" disabled={action.busy}>
          {method === "password" || codeSent ? "Sign in" : "Send code"}
        </button>
        {codeSent && method === "code" ? (
          <p class="hint">If the address has an account, a six-digit code is on its way.</p>
        ) : null}
        <ErrorNote error={action.error} />
      </form>
    </main>
  );
}
