// The Agent view's answers: markdown-it renders, DOMPurify sanitizes (here bound to jsdom's window,
// in the webview to the webview's own).
import assert from 'node:assert/strict';
import { test } from 'node:test';

import DOMPurify from 'dompurify';
import { JSDOM } from 'jsdom';

import { markdownRenderer } from '../../src/sessionView/markdown';

const { window } = new JSDOM('');
const render = markdownRenderer(DOMPurify(window));

/** The rendered fragment parsed back, to look at elements and attributes rather than text. */
function parsed(markdown: string): DocumentFragment {
  const template = window.document.createElement('template');
  template.innerHTML = render(markdown);
  return template.content;
}

test('markdown renders: headings, emphasis, code, lists, tables, links', () => {
  const html = render('# Fix\n\n**mean()** divides by `len - 1`:\n\n- one\n- two\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n[docs](https://example.org/x)\n\n```py\nx = 1\n```');
  assert.match(html, /<h1>Fix<\/h1>/);
  assert.match(html, /<strong>mean\(\)<\/strong>/);
  assert.match(html, /<code>len - 1<\/code>/);
  assert.match(html, /<li>two<\/li>/);
  assert.match(html, /<td>2<\/td>/);
  assert.match(html, /<a href="https:\/\/example.org\/x">docs<\/a>/);
  assert.match(html, /<pre><code class="language-py">x = 1\n<\/code><\/pre>/);
});

test('a <script> in an answer is removed, with its content', () => {
  const fragment = parsed('Hello <script>alert(1)</script> world\n\n<script src="https://evil.example/x.js"></script>');
  assert.equal(fragment.querySelectorAll('script').length, 0);
  assert.ok(!render('<script>alert(1)</script>').includes('alert'));
});

test('event handler attributes are removed (onerror, onclick, onload)', () => {
  const fragment = parsed('<img src=x onerror="alert(1)">\n\n<a href="#" onclick="alert(2)">x</a> <div onload="alert(3)">y</div>');
  for (const element of fragment.querySelectorAll('*')) {
    for (const attribute of element.getAttributeNames()) {
      assert.ok(!attribute.startsWith('on'), `${element.tagName} kept ${attribute}`);
    }
  }
  assert.ok(!render('<img src=x onerror="alert(1)">').includes('alert'));
});

test('no image is kept, remote or not: markdown images become their alt text', () => {
  const fragment = parsed('![a tracking pixel](https://evil.example/pixel.png)\n\n<img src="https://evil.example/x.png">\n\n<img src="data:image/png;base64,AAAA">');
  assert.equal(fragment.querySelectorAll('img').length, 0);
  assert.ok(!render('![x](https://evil.example/pixel.png)').includes('evil.example'));
  assert.match(render('![a tracking pixel](https://evil.example/pixel.png)'), /\[image: a tracking pixel\]/);
});

test('nothing that loads or runs is kept: javascript: links, iframes, styles, forms, svg', () => {
  const fragment = parsed(
    '[x](javascript:alert(1))\n\n<iframe src="https://evil.example"></iframe>\n\n<p style="background:url(https://evil.example/y)">s</p>\n\n' +
      '<form action="https://evil.example"><input name="q"><button>go</button></form>\n\n<svg><image href="https://evil.example/z"/></svg>\n\n<video poster="https://evil.example/p"></video>',
  );
  for (const tag of ['iframe', 'form', 'input', 'button', 'svg', 'image', 'video', 'style']) {
    assert.equal(fragment.querySelectorAll(tag).length, 0, `a <${tag}> was kept`);
  }
  for (const element of fragment.querySelectorAll('*')) {
    assert.equal(element.getAttribute('style'), null);
    assert.ok(!(element.getAttribute('href') ?? '').startsWith('javascript:'), 'a javascript: link was kept');
  }
  assert.ok(!render('<p style="background:url(https://evil.example/y)">s</p>').includes('evil.example'));
});
