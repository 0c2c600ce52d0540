// /ui/clients: the nodes, in a windowed table.

import { html, badge, section, ListView } from '../dom.js';
import { live, nodeHref } from './common.js';

export function render(root, params, ctx) {
  root.innerHTML = html`<h1>Clients</h1>`;
  const el = section(root, 'clients');
  const view = new ListView(el, ['Name', 'ID', 'Datacenter', 'Pool', 'Status', 'Eligibility', 'Drain'], (n) => [
    html`<a href="${nodeHref(n.ID)}">${n.Name}</a>`, n.ID, n.Datacenter, n.NodePool,
    badge(n.Status), n.SchedulingEligibility, n.Drain ? 'draining' : 'no',
  ], 'No clients.');
  live(ctx, el, '/v1/nodes', {}, (nodes) => view.set(nodes.sort((a, b) => (a.Name < b.Name ? -1 : 1))), { topics: ['Node'] });
}
