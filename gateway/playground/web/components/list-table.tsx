// The tables that list what a page holds (routers, providers, users, keys, usage records): in a
// scrolling wrapper, with a caption for screen readers, column headings that right-align a
// column of numbers, and, when rows have buttons, a last column headed "Actions" for screen
// readers only. The rows themselves are each page's own.
import type { ComponentChildren } from 'preact';
import { ConfirmButton } from './confirm.tsx';

/** A column heading: its text, and whether the column holds numbers (right-aligned). */
export type Column = string | { readonly label: string; readonly num: true };

export function ListTable(props: {
  caption: string;
  columns: readonly Column[];
  actions?: boolean;
  class?: string;
  children: ComponentChildren;
}) {
  return (
    <div class="table-wrap">
      <table class={props.class}>
        <caption class="visually-hidden">{props.caption}</caption>
        <thead>
          <tr>
            {props.columns.map((column) =>
              typeof column === 'string' ? (
                <th key={column} scope="col">
                  {column}
                </th>
              ) : (
                <th key={column.label} scope="col" class="num">
                  {column.label}
                </th>
              ),
            )}
            {props.actions && (
              <th scope="col">
                <span class="visually-hidden">Actions</span>
              </th>
            )}
          </tr>
        </thead>
        <tbody>{props.children}</tbody>
      </table>
    </div>
  );
}

/** A numbers column. */
export const num = (label: string): Column => ({ label, num: true });

/**
 * The last cell of a row that can be edited and deleted: "Edit <name>" (the name for screen
 * readers only) and "Delete <name>", which asks `question` inline before it deletes.
 */
export function EditDeleteCell(props: { name: string; question: string; onEdit: () => void; onDelete: () => Promise<void> }) {
  return (
    <td class="row-actions">
      <button type="button" onClick={props.onEdit}>
        Edit <span class="visually-hidden">{props.name}</span>
      </button>
      <ConfirmButton label={`Delete ${props.name}`} question={props.question} confirmLabel="Yes, delete" onConfirm={props.onDelete} />
    </td>
  );
}
