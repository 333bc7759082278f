/** A job's or a node's state, as a word with a colour (the word alone carries the meaning). */
export function StateBadge(props: { state: string }) {
  return <span class={`badge state-${props.state}`}>{props.state.replaceAll("_", " ")}</span>;
}
