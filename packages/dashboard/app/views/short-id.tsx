/**
 * An id shown short (`ten_…k3x9qp`, format.ts `shortId`) with the full id a hover (its title)
 * or a copy away: one click selects it, and copying it copies the whole id.
 */

import { shortId } from '../format.ts';

export function ShortId({ id }: { id: string }) {
  return (
    <code
      class="short-id"
      title={id}
      data-id={id}
      onCopy={(e) => {
        // Only a selection inside this id: one that runs on past it copies as the page reads.
        const selection = getSelection();
        const inside = (node: Node | null | undefined) => node != null && e.currentTarget.contains(node);
        if (!inside(selection?.anchorNode) || !inside(selection?.focusNode)) return;
        e.clipboardData?.setData('text/plain', id);
        e.preventDefault();
      }}
    >
      {shortId(id)}
    </code>
  );
}
