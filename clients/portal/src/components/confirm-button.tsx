import type { ComponentChildren } from "preact";
import { useId, useRef } from "preact/hooks";

/**
 * A button for what cannot be undone (a delete): it opens a modal dialog that says what
 * goes, and only its confirm button acts. Escape or "Keep" closes it with nothing done.
 */
export function ConfirmButton(props: {
  label: string;
  /** The button's accessible name when `label` alone is ambiguous in a list ("Delete nightly"). */
  name?: string;
  title: string;
  children: ComponentChildren;
  confirm: string;
  onConfirm: () => void;
  disabled?: boolean;
}) {
  const dialog = useRef<HTMLDialogElement>(null);
  const titleId = useId();
  return (
    <>
      <button
        type="button"
        class="danger"
        disabled={props.disabled}
        aria-label={props.name}
        onClick={() => dialog.current?.showModal()}
      >
        {props.label}
      </button>
      <dialog ref={dialog} aria-labelledby={titleId} class="confirm">
        <h2 id={titleId}>{props.title}</h2>
        <div>{props.children}</div>
        <div class="actions">
          <button
            type="button"
            class="danger"
            onClick={() => {
              dialog.current?.close();
              props.onConfirm();
            }}
          >
            {props.confirm}
          </button>
          <button type="button" class="secondary" onClick={() => dialog.current?.close()}>
            Keep
          </button>
        </div>
      </dialog>
    </>
  );
}
