// What the pages share: following a resource into a section of the page.

import { watch } from '../api.js';
import { errorText, html, shortID, badge } from '../dom.js';

// live follows path (a blocking query) and calls draw(data) on each
// change (draw may be async); a failed read shows its error in el. The
// page counts the section as drawn after its first answer.
export function live(ctx, el, path, params, draw, wait) {
  const drawn = ctx.track();
  watch(path, params, async (data) => { await draw(data); drawn(); },
    (e) => { el.innerHTML = errorText(e); drawn(); }, ctx.signal, wait);
}

export const jobHref = (id, ns) => `/ui/jobs/${encodeURIComponent(id)}@${encodeURIComponent(ns || 'default')}`;
export const allocHref = (id) => `/ui/allocations/${encodeURIComponent(id)}`;
export const nodeHref = (id) => `/ui/clients/${encodeURIComponent(id)}`;

export const allocHeads = ['ID', 'Task group', 'Job', 'Node', 'Version', 'Desired', 'Status'];
export function allocRow(a) {
  return [
    html`<a href="${allocHref(a.ID)}">${shortID(a.ID)}</a>`,
    a.TaskGroup,
    html`<a href="${jobHref(a.JobID, a.Namespace)}">${a.JobID}</a>`,
    a.NodeID ? html`<a href="${nodeHref(a.NodeID)}">${a.NodeName || shortID(a.NodeID)}</a>` : '—',
    a.JobVersion ?? '',
    a.DesiredStatus,
    badge(a.ClientStatus),
  ];
}

// byNewest orders allocations newest first.
export const byNewest = (a, b) => (b.CreateIndex || 0) - (a.CreateIndex || 0);
