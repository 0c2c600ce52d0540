// /ui/csi/plugins: the CSI plugins and their controller and node health.

import { html, section, table } from '../dom.js';
import { live } from './common.js';

export function render(root, params, ctx) {
  root.innerHTML = html`<h1>CSI plugins</h1>`;
  const el = section(root, 'plugins');
  live(ctx, el, '/v1/plugins', { type: 'csi' }, (list) => {
    el.innerHTML = table(['ID', 'Provider', 'Controllers healthy', 'Nodes healthy'], (list || []).map((p) => [
      p.ID, p.Provider || '',
      `${p.ControllersHealthy || 0}/${p.ControllersExpected || 0}`,
      `${p.NodesHealthy || 0}/${p.NodesExpected || 0}`,
    ]), 'No CSI plugins.');
  }, { topics: ['CSIPlugin'] });
}
