// /ui/csi/volumes: the CSI volumes, each with its claims and their states
// (taken, unpublishing, node-detached, controller-detached, freed).

import { get } from '../api.js';
import { html, badge, section, table, shortID, errorText } from '../dom.js';
import { live, allocHref, nodeHref } from './common.js';

const MAX_DETAILED = 50; // volumes whose claims are read, on one page

export function render(root, params, ctx) {
  root.innerHTML = html`<h1>CSI volumes</h1>`;
  const el = section(root, 'volumes');
  let gen = 0;
  live(ctx, el, '/v1/volumes', { type: 'csi', namespace: '*' }, async (list) => {
    const mine = ++gen;
    list.sort((a, b) => (a.ID < b.ID ? -1 : 1));
    // The list rows carry no claims: each volume's own read has them.
    const details = await Promise.all(list.slice(0, MAX_DETAILED).map((v) =>
      get(`/v1/volume/csi/${encodeURIComponent(v.ID)}`, { namespace: v.Namespace }, ctx.signal)
        .then((r) => r.data, (e) => ({ ...v, error: e }))));
    if (mine !== gen) return;
    el.innerHTML = list.length ? html`${details.map(drawVolume)}${list.length > MAX_DETAILED
      ? html`<p class="muted">${list.length - MAX_DETAILED} more volumes not shown.</p>` : ''}`
      : html`<p class="muted">No CSI volumes.</p>`;
  }, { topics: ['CSIVolume'] });
}

function drawVolume(v) {
  return html`<div data-volume="${v.ID}"><h2>${v.Name || v.ID} <span class="muted">@${v.Namespace}</span></h2>
${v.error ? errorText(v.error) : ''}
<dl class="kv"><dt>Plugin</dt><dd>${v.PluginID}</dd><dt>Schedulable</dt><dd>${v.Schedulable ? 'yes' : 'no'}</dd>
<dt>Access</dt><dd>${(v.RequestedCapabilities || []).map((c) => `${c.AccessMode}/${c.AttachmentMode}`).join(', ') || v.AccessMode || ''}</dd></dl>
${table(['Allocation', 'Node', 'Mode', 'State'], (v.Claims || []).map((c) => [
    html`<a href="${allocHref(c.AllocationID)}">${shortID(c.AllocationID)}</a>`,
    html`<a href="${nodeHref(c.NodeID)}">${shortID(c.NodeID)}</a>`,
    c.Mode, html`<span data-claim-state="${c.State}">${badge(c.State)}</span>`,
  ]), 'No claims.')}</div>`;
}
