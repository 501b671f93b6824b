// The extension pages' DOM toolkit (popup, options page, dashboard): elements looked up by id, elements built with
// text only ever set as textContent (never markup), and files offered for download from a Blob.

/** The page's element with id `id` (declared in the page's HTML). */
export const $ = <T extends HTMLElement = HTMLElement>(id: string): T => document.getElementById(id) as T;

/** Creates an element with optional text (as textContent) and class. */
export function el<K extends keyof HTMLElementTagNameMap>(tag: K, text?: string, className?: string): HTMLElementTagNameMap[K] {
  const e = document.createElement(tag);
  if (text !== undefined) e.textContent = text;
  if (className) e.className = className;
  return e;
}

// The browser reads a clicked Blob link after the click returns, so a temporary link's URL lives on a while.
const TEMPORARY_URL_MS = 10_000;

/**
 * Offers `text` (of MIME `type`) as a file named `filename`, by clicking a link to a Blob. With `link`, that link of
 * the page keeps the file's URL (a test can read the file back; the one before is revoked); without, a temporary
 * link is added, clicked and removed, and its URL revoked after 10 s.
 */
export function download(filename: string, type: string, text: string, link?: HTMLAnchorElement): void {
  const url = URL.createObjectURL(new Blob([text], { type }));
  if (link) {
    if (link.href.startsWith('blob:')) URL.revokeObjectURL(link.href);
    link.href = url;
    link.download = filename;
    link.click();
    return;
  }
  const a = el('a');
  a.href = url;
  a.download = filename;
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), TEMPORARY_URL_MS);
}
