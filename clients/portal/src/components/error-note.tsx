import { ApiError } from "../../../sdk/src/index.js";

/** A failure as people read it: the service's message, and its stable code to quote. */
export function ErrorNote(props: { error: unknown }) {
  const { error } = props;
  if (error === undefined || error === null) return null;
  const message = error instanceof Error ? error.message : String(error);
  return (
    <p class="error" role="alert">
      {message}
      {error instanceof ApiError ? <code class="code">{error.code}</code> : null}
    </p>
  );
}
