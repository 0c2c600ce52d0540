// Small helpers for drawing pages as HTML strings (escaped).

const ESC = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

export function esc(v) {
  return String(v ?? '').replace(/[&<>"']/g, (c) => ESC[c]);
}

// html is a tagged template that escapes every value except those made by
// raw() or html itself.
export function html(strings, ...values) {
  let out = strings[0];
  values.forEach((v, i) => { out += show(v) + strings[i + 1]; });
  return new Raw(out);
}

class Raw { constructor(s) { this.s = s; } toString() { return this.s; } }
export function raw(s) { return new Raw(s); }

function show(v) {
  if (v instanceof Raw) return v.s;
  if (Array.isArray(v)) return v.map(show).join('');
  return esc(v);
}

export function badge(status) {
  return html`<span class="badge s-${status || 'none'}">${status || '—'}</span>`;
}

export function shortID(id) { return (id || '').slice(0, 8); }

export function ago(nanos) {
  if (!nanos) return '—';
  return new Date(nanos / 1e6).toISOString().replace('T', ' ').replace(/\.\d+Z$/, 'Z');
}

// table draws rows (already paged) under heads.
export function table(heads, rows, empty = 'None.') {
  if (!rows.length) return html`<p class="muted">${empty}</p>`;
  return html`<table><thead><tr>${heads.map((h) => html`<th>${h}</th>`)}</tr></thead>
<tbody>${rows.map((r) => html`<tr>${r.map((c) => html`<td>${c}</td>`)}</tr>`)}</tbody></table>`;
}

// Pager shows one page of a long list at a time, so a page with thousands
// of rows draws only the rows in view.
export const PAGE = 50;
export function pageOf(list, page) {
  const pages = Math.max(1, Math.ceil(list.length / PAGE));
  const p = Math.min(Math.max(0, page), pages - 1);
  return { rows: list.slice(p * PAGE, (p + 1) * PAGE), page: p, pages };
}
export function pager(name, pg, total) {
  if (pg.pages <= 1) return html``;
  return html`<div class="pager" data-pager="${name}">
<button data-page="${pg.page - 1}" ${raw(pg.page === 0 ? 'disabled' : '')}>‹ Prev</button>
<span>Page ${pg.page + 1} of ${pg.pages} (${total})</span>
<button data-page="${pg.page + 1}" ${raw(pg.page + 1 >= pg.pages ? 'disabled' : '')}>Next ›</button></div>`;
}

// section is a region of a page that is redrawn on its own.
export function section(root, id) {
  let el = root.querySelector(`[data-section="${id}"]`);
  if (!el) {
    el = document.createElement('div');
    el.dataset.section = id;
    root.appendChild(el);
  }
  return el;
}

export function errorText(e) { return html`<p class="error">${e.message || e}</p>`; }

// ListView draws a list as a paged table in el: set(list) redraws the
// current page; Prev and Next move through the pages.
export class ListView {
  constructor(el, heads, row, empty) {
    Object.assign(this, { el, heads, row, empty, list: [], page: 0 });
    el.addEventListener('click', (ev) => {
      const b = ev.target.closest('button[data-page]');
      if (!b) return;
      this.page = Number(b.dataset.page);
      this.draw();
    });
  }
  set(list) { this.list = list; this.draw(); }
  draw() {
    const pg = pageOf(this.list, this.page);
    this.page = pg.page;
    this.el.innerHTML = html`${table(this.heads, pg.rows.map(this.row), this.empty)}${pager('p', pg, this.list.length)}`;
  }
}
