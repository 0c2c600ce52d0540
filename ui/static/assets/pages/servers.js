// /ui/servers: the server members, the raft peers and the leader. These
// endpoints have no index to block on: the page reads them when it opens
// and again on Refresh.

import { get } from '../api.js';
import { html, badge, section, table, errorText } from '../dom.js';

export function render(root, params, ctx) {
  root.innerHTML = html`<h1>Servers</h1><button data-refresh>Refresh</button>`;
  const el = section(root, 'servers');
  const drawn = ctx.track();
  const load = async () => {
    try {
      const [members, raft, leader] = await Promise.all([
        get('/v1/agent/members', {}, ctx.signal), get('/v1/operator/raft/configuration', {}, ctx.signal),
        get('/v1/status/leader', {}, ctx.signal)]);
      el.innerHTML = html`<dl class="kv"><dt>Leader</dt><dd data-leader>${leader.data}</dd></dl>
<h2>Members</h2>${table(['Name', 'Address', 'Port', 'Status', 'Region', 'Datacenter'], (members.data.Members || []).map((m) => [
        m.Name, m.Addr, m.Port, badge(m.Status), m.Tags?.region || '', m.Tags?.dc || '']))}
<h2>Raft peers</h2><div data-peers>${table(['Node', 'ID', 'Address', 'Leader', 'Voter'], (raft.data.Servers || []).map((s) => [
        s.Node, s.ID, s.Address, s.Leader ? 'yes' : 'no', s.Voter ? 'yes' : 'no']))}</div>`;
    } catch (e) {
      if (!ctx.signal.aborted) el.innerHTML = errorText(e);
    }
    drawn();
  };
  root.querySelector('[data-refresh]').addEventListener('click', load);
  load();
}
