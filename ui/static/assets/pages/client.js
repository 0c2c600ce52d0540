// /ui/clients/<id>: a node's resources, drivers, devices, drain state and
// allocations.

import { html, badge, section, table, ago, duration, ListView } from '../dom.js';
import { live, liveList, allocsFirst, allocHeads, allocRow, applyAlloc, byNewest } from './common.js';

// drain says whether the node drains, and how: its deadline (-1: stop
// everything now; 0: none), when it is forced, and whether system jobs
// stay.
function drain(n) {
  const d = n.DrainStrategy;
  if (!d) return 'not draining';
  const deadline = Number(d.Deadline ?? d.DrainSpec?.Deadline ?? 0);
  const force = Number(d.ForceDeadline) || 0; // unix nanos
  const parts = [deadline < 0 ? 'forced now' : deadline === 0 ? 'no deadline' : `deadline ${duration(deadline)}`];
  if (deadline > 0 && force > 0) parts.push(`forced at ${ago(force)}`);
  if (d.IgnoreSystemJobs || d.DrainSpec?.IgnoreSystemJobs) parts.push('ignoring system jobs');
  return `draining, ${parts.join(', ')}`;
}

export function render(root, { id }, ctx) {
  const base = `/v1/node/${encodeURIComponent(id)}`;
  root.innerHTML = html`<h1>Client ${id}</h1>`;
  const head = section(root, 'node');
  live(ctx, head, base, {}, (n) => {
    const r = n.NodeResources || {};
    const devices = (r.Devices || []).flatMap((d) => (d.Instances || [{}]).map((i) => [
      `${d.Vendor}/${d.Type}/${d.Name}`, i.ID || '', i.Healthy ? 'healthy' : 'unhealthy']));
    head.innerHTML = html`<dl class="kv">
<dt>Name</dt><dd>${n.Name}</dd><dt>Status</dt><dd>${badge(n.Status)}</dd>
<dt>Eligibility</dt><dd>${n.SchedulingEligibility}</dd><dt>Drain</dt><dd data-drain>${drain(n)}</dd>
<dt>Datacenter</dt><dd>${n.Datacenter}</dd><dt>Address</dt><dd>${n.HTTPAddr}</dd></dl>
<h2>Resources</h2><div data-resources>${table(['CPU (MHz)', 'Cores', 'Memory (MiB)', 'Disk (MiB)'], [[
      r.Cpu?.CpuShares ?? '', r.Cpu?.TotalCpuCores ?? '', r.Memory?.MemoryMB ?? '', r.Disk?.DiskMB ?? '']])}</div>
<h2>Drivers</h2>${table(['Driver', 'Detected', 'Healthy', 'Description'], Object.entries(n.Drivers || {})
      .sort(([a], [b]) => (a < b ? -1 : 1))
      .map(([name, d]) => [name, d.Detected ? 'yes' : 'no', d.Healthy ? 'yes' : 'no', d.HealthDescription || ''])) }
<h2>Devices</h2>${table(['Device', 'Instance', 'Health'], devices, 'No devices.')}`;
  }, { topics: [`Node:${id}`] });
  root.insertAdjacentHTML('beforeend', '<h2>Allocations</h2>');
  const allocs = section(root, 'allocations');
  const view = new ListView(allocs, allocHeads, allocRow, 'No allocations.');
  liveList(ctx, view, `${base}/allocations`, {}, byNewest, allocsFirst('*', `NodeID == ${JSON.stringify(id)}`),
    { topics: ['Allocation'], match: (ev) => ev.Payload?.Allocation?.NodeID === id, apply: applyAlloc(view, () => true) });
}
