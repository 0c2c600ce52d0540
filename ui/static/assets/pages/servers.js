// /ui/servers: the server members, the raft peers and the leader,
// followed as they change. Gossip and raft's configuration are no raft
// state: /v1/operator/raft/configuration and /v1/agent/members block
// (?index=) on the agent's store only, so the page reads them again when
// the store moves or after FOLLOW_WAIT at the latest, and draws again
// only when what it read differs from what it shows.

import { get } from '../api.js';
import { html, badge, section, table, errorText } from '../dom.js';

// A server can join, leave or become leader without a store change: a
// blocking read of the raft configuration returns after this long.
const FOLLOW_WAIT = '2s';

export function render(root, params, ctx) {
  root.innerHTML = html`<h1>Servers</h1>`;
  const el = section(root, 'servers');
  follow(ctx, el, ctx.track());
}

async function follow(ctx, el, drawn) {
  let index = 0;
  let shown = '';
  let backoff = 250;
  while (!ctx.signal.aborted) {
    try {
      const raft = await get('/v1/operator/raft/configuration', index ? { index, wait: FOLLOW_WAIT } : {}, ctx.signal);
      const [members, leader] = await Promise.all([
        get('/v1/agent/members', {}, ctx.signal), get('/v1/status/leader', {}, ctx.signal)]);
      // An index that went back (a new leader's store) starts over.
      index = raft.index >= index ? raft.index : 0;
      backoff = 250;
      const now = JSON.stringify([members.data.Members, raft.data.Servers, leader.data]);
      if (now !== shown) {
        shown = now;
        draw(el, members.data, raft.data, leader.data);
      }
    } catch (e) {
      if (ctx.signal.aborted) return;
      el.innerHTML = errorText(e);
      shown = '';
      await pause(backoff, ctx.signal);
      backoff = Math.min(backoff * 2, 10000);
    }
    drawn();
  }
}

function draw(el, members, raft, leader) {
  el.innerHTML = html`<dl class="kv"><dt>Leader</dt><dd data-leader>${leader}</dd></dl>
<h2>Members</h2><div data-members>${table(['Name', 'Address', 'Port', 'Status', 'Region', 'Datacenter'], (members.Members || []).map((m) => [
    m.Name, m.Addr, m.Port, badge(m.Status), m.Tags?.region || '', m.Tags?.dc || '']))}</div>
<h2>Raft peers</h2><div data-peers>${table(['Node', 'ID', 'Address', 'Leader', 'Voter'], (raft.Servers || []).map((s) => [
    s.Node, s.ID, s.Address, s.Leader ? 'yes' : 'no', s.Voter ? 'yes' : 'no']))}</div>`;
}

function pause(ms, signal) {
  return new Promise((resolve) => {
    const t = setTimeout(resolve, ms);
    signal.addEventListener('abort', () => { clearTimeout(t); resolve(); }, { once: true });
  });
}
