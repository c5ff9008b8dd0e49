/**
 * The model's answer as HTML for the session view: markdown-it renders it, DOMPurify sanitizes the
 * result. Answers are untrusted (they can quote a file or a web page), so the HTML keeps no script,
 * no event handler attribute, no inline style, no form control and no image: a markdown image
 * becomes its alt text (`[image: alt]`), so nothing in an answer makes the webview fetch anything.
 * The webview's CSP (`html.ts`) forbids network requests as well; this is the first line.
 *
 * Pure: no `vscode` import and no DOM global; the caller hands in a DOMPurify instance bound to a
 * window (the webview's own, or jsdom's in the unit tests).
 */

import type { DOMPurify } from 'dompurify';
import MarkdownIt from 'markdown-it';

/** Elements never kept, whatever the markdown says (DOMPurify's defaults already drop `script`). */
const FORBID_TAGS = [
  'img',
  'picture',
  'source',
  'video',
  'audio',
  'track',
  'iframe',
  'object',
  'embed',
  'link',
  'meta',
  'base',
  'style',
  'svg',
  'math',
  'form',
  'input',
  'button',
  'textarea',
  'select',
];
/** Attributes never kept: inline styles and everything that can name a resource to load. */
const FORBID_ATTR = ['style', 'src', 'srcset', 'background', 'poster', 'action', 'formaction', 'ping'];

export type RenderMarkdown = (text: string) => string;

/**
 * A renderer bound to `purify`. The returned function maps markdown (CommonMark plus GFM tables and
 * strikethrough, markdown-it's defaults; raw HTML allowed and then sanitized) to an HTML fragment.
 */
export function markdownRenderer(purify: DOMPurify): RenderMarkdown {
  const md = new MarkdownIt({ html: true, linkify: false, typographer: false });
  md.renderer.rules.image = (tokens, idx) => {
    const alt = tokens[idx]?.content ?? '';
    return md.utils.escapeHtml(`[image${alt ? `: ${alt}` : ''}]`);
  };
  return (text) =>
    purify.sanitize(md.render(text), {
      FORBID_TAGS,
      FORBID_ATTR,
      ALLOW_DATA_ATTR: false,
      ALLOW_UNKNOWN_PROTOCOLS: false,
    });
}
