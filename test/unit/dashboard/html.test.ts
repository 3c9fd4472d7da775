import { describe, expect, it } from 'vitest';
import { escapeHtml, html, query } from '../../../src/dashboard/html.js';

describe('html', () => {
  it('escapes every value put in, unless it is Html itself; arrays are joined; nothing for undefined, null and false', () => {
    const name = '<img src=x onerror=alert(1)>';
    expect(html`<td>${name}</td>`.text).toBe('<td>&lt;img src=x onerror=alert(1)&gt;</td>');
    expect(html`<a title="${'" onmouseover="x'}">`.text).toBe('<a title="&quot; onmouseover=&quot;x">');
    expect(html`<ul>${['<a>', html`<li>ok</li>`]}</ul>`.text).toBe('<ul>&lt;a&gt;<li>ok</li></ul>');
    expect(html`${undefined}${null}${false}${0}`.text).toBe('0');
    expect(escapeHtml("'`&")).toBe('&#39;&#96;&amp;');
  });

  it('shows characters that change how text reads (bidi overrides, zero-width) as their code points', () => {
    expect(escapeHtml('invoice\u202Efdp.exe')).toBe('invoice&lt;U+202E&gt;fdp.exe');
    expect(escapeHtml('a\u200Bb\uFEFF')).toBe('a&lt;U+200B&gt;b&lt;U+FEFF&gt;');
  });

  it('builds query strings from the fields set', () => {
    expect(query({ a: 'x y', b: undefined, c: '', d: 3 })).toBe('?a=x+y&d=3');
    expect(query({})).toBe('');
  });
});
