/** A labelled text input bound to a string state: `value` shown, `onValue` told each edit (other input types are written out: preact types each apart). */
export function TextField(props: {
  label: string;
  name: string;
  value: string;
  onValue: (value: string) => void;
  inputMode?: "numeric" | "decimal";
  placeholder?: string;
  required?: boolean;
}) {
  const { label, name, value, onValue, inputMode, placeholder, required } = props;
  return (
    <label>
      {label}
      <input
        name={name}
        type="text"
        inputMode={inputMode}
        placeholder={placeholder}
        required={required}
        value={value}
        onInput={(e) => onValue(e.currentTarget.value)}
      />
    </label>
  );
}
