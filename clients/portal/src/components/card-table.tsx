import type { ComponentChildren } from "preact";

/**
 * A table of records that becomes a list of cards on a phone (styles.css `table.cards`:
 * each cell on its own line, named by its `data-label`). `actions`: a last column of
 * buttons, named for screen readers only. `empty`: said under the table when it has no rows.
 */
export function CardTable(props: {
  columns: readonly string[];
  actions?: boolean;
  empty?: string | false;
  children: ComponentChildren;
}) {
  return (
    <div class="table-wrap">
      <table class="cards">
        <thead>
          <tr>
            {props.columns.map((column) => (
              <th scope="col">{column}</th>
            ))}
            {props.actions ? (
              <th scope="col">
                <span class="visually-hidden">Actions</span>
              </th>
            ) : null}
          </tr>
        </thead>
        <tbody>{props.children}</tbody>
      </table>
      {props.empty ? <p class="hint">{props.empty}</p> : null}
    </div>
  );
}
