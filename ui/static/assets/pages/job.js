// /ui/jobs/<id>@<namespace>: a job's groups, versions, deployments,
// allocation counts and allocations, each followed on its own.

import { html, badge, section, table, shortID, ago, ListView } from '../dom.js';
import { live, liveList, allocsFirst, allocHeads, allocRow, applyAlloc, byNewest } from './common.js';

export function render(root, { id, namespace = 'default' }, ctx) {
  const base = `/v1/job/${encodeURIComponent(id)}`;
  const q = { namespace };
  // The job's events: its own, and its allocations' and deployments'
  // (the job's ID is their filter key), in its namespace.
  const inNs = (ev) => (ev.Namespace || 'default') === namespace;
  const follow = (topic) => ({ topics: [`${topic}:${id}`], match: inNs });
  root.innerHTML = html`<h1>Job ${id} <span class="muted">@${namespace}</span></h1>`;
  const head = section(root, 'job');
  live(ctx, head, base, q, (j) => {
    head.innerHTML = html`<dl class="kv">
<dt>Status</dt><dd>${badge(j.Stop ? 'stopped' : j.Status)}</dd>
<dt>Type</dt><dd>${j.Type}</dd><dt>Priority</dt><dd>${j.Priority}</dd>
<dt>Version</dt><dd>${j.Version}</dd><dt>Datacenters</dt><dd>${(j.Datacenters || []).join(', ')}</dd></dl>
<h2>Task groups</h2>${table(['Name', 'Count', 'Tasks', 'Volumes'], (j.TaskGroups || []).map((g) => [
      g.Name, g.Count,
      (g.Tasks || []).map((t) => `${t.Name} (${t.Driver})`).join(', '),
      Object.keys(g.Volumes || {}).join(', ') || '—',
    ]))}`;
  }, follow('Job'));
  root.insertAdjacentHTML('beforeend', '<h2>Versions</h2>');
  const versions = section(root, 'versions');
  live(ctx, versions, `${base}/versions`, q, (v) => {
    versions.innerHTML = table(['Version', 'Stable', 'Submitted'], (v.Versions || []).map((j) => [
      j.Version, j.Stable ? 'yes' : 'no', ago(j.SubmitTime),
    ]));
  }, follow('Job'));
  root.insertAdjacentHTML('beforeend', '<h2>Deployments</h2>');
  const deps = section(root, 'deployments');
  live(ctx, deps, `${base}/deployments`, q, (list) => {
    deps.innerHTML = table(['ID', 'Version', 'Status', 'Description', 'Groups'], (list || []).map((d) => [
      shortID(d.ID), d.JobVersion, badge(d.Status), d.StatusDescription,
      Object.entries(d.TaskGroups || {}).map(([n, g]) =>
        `${n}: ${g.HealthyAllocs || 0}/${g.DesiredTotal || 0} healthy`).join('; '),
    ]), 'No deployments.');
  }, follow('Deployment'));
  root.insertAdjacentHTML('beforeend', '<h2>Allocations</h2>');
  // The counts by status come before the list (of thousands, maybe).
  const sum = section(root, 'summary');
  const states = ['Queued', 'Starting', 'Running', 'Complete', 'Failed', 'Lost', 'Unknown'];
  live(ctx, sum, `${base}/summary`, q, (s) => {
    sum.innerHTML = table(['Task group', ...states], Object.entries(s.Summary || {})
      .sort(([a], [b]) => (a < b ? -1 : 1))
      .map(([g, c]) => [g, ...states.map((k) => c[k] || 0)]), 'No task groups.');
  }, follow('Allocation'));
  const allocs = section(root, 'allocations');
  const view = new ListView(allocs, allocHeads, allocRow, 'No allocations.');
  const ours = (a) => a.JobID === id && (a.Namespace || 'default') === namespace;
  liveList(ctx, view, `${base}/allocations`, q, byNewest, allocsFirst(namespace, `JobID == ${JSON.stringify(id)}`),
    { ...follow('Allocation'), apply: applyAlloc(view, ours) });
}
