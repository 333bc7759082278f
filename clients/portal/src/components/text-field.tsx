import type { InputHTMLAttributes } from "preact";

/** A labelled input bound to a string state: `value` shown, `onValue` told each edit. Other props go to the input. */
export function TextField(
  props: { label: string; value: string; onValue: (value: string) => void } & Omit<
    InputHTMLAttributes<HTMLInputElement>,
    "value" | "onInput"
  >,
) {
  const { label, value, onValue, ...input } = props;
  return (
    <label>
      {label}
      <input {...input} value={value} onInput={(e) => onValue(e.currentTarget.value)} />
    </label>
  );
}
