import { ApiError } from "../../../sdk/src/index.js";
import { isSignedIn, signOut } from "../session.js";

/** What a form's check found, one line each, announced. */
export function Problems(props: { problems: readonly string[] }) {
  if (props.problems.length === 0) return null;
  return (
    <ul class="error" role="alert">
      {props.problems.map((problem) => (
        <li>{problem}</li>
      ))}
    </ul>
  );
}

/**
 * A failure as people read it: the service's message, and its stable code to quote. A 401
 * means the session is over (signed out elsewhere, or its refresh token spent): the way
 * on is a new sign-in.
 */
export function ErrorNote(props: { error: unknown }) {
  const { error } = props;
  if (error === undefined || error === null) return null;
  const message = error instanceof Error ? error.message : String(error);
  return (
    <p class="error" role="alert">
      {message}
      {error instanceof ApiError ? <code class="code">{error.code}</code> : null}
      {error instanceof ApiError && error.status === 401 && isSignedIn() ? (
        <button type="button" class="secondary sign-in-again" onClick={() => void signOut()}>
          Sign in again
        </button>
      ) : null}
    </p>
  );
}
