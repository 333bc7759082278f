import { useState } from "preact/hooks";

/** A secret the service shows this once (an API key, a node key), with a copy button. */
export function SecretOnce(props: { label: string; secret: string; onDone: () => void }) {
  const [copied, setCopied] = useState(false);
  const copy = async () => {
    await navigator.clipboard.writeText(props.secret);
    setCopied(true);
  };
  return (
    <section class="secret" aria-label={props.label}>
      <h3>{props.label}</h3>
      <p>Store it now: it is not shown again.</p>
      <div class="secret-row">
        <code data-testid="secret">{props.secret}</code>
        <button type="button" onClick={() => void copy()}>
          {copied ? "Copied" : "Copy"}
        </button>
        <button type="button" class="secondary" onClick={props.onDone}>
          Done
        </button>
      </div>
    </section>
  );
}
