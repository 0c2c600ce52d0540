// /ui/jobs: every job of every namespace, in a windowed table.

import { html, badge, section, ListView } from '../dom.js';
import { live, jobHref, explainEmpty } from './common.js';

function summary(j) {
  const out = { running: 0, pending: 0, failed: 0, complete: 0 };
  for (const s of Object.values(j.JobSummary?.Summary || {})) {
    out.running += s.Running || 0; out.pending += (s.Starting || 0) + (s.Queued || 0);
    out.failed += (s.Failed || 0) + (s.Lost || 0); out.complete += s.Complete || 0;
  }
  return `${out.running} running, ${out.pending} pending, ${out.failed} failed, ${out.complete} complete`;
}

export function render(root, params, ctx) {
  root.innerHTML = html`<h1>Jobs</h1>`;
  const notice = section(root, 'notice');
  const el = section(root, 'jobs');
  const view = new ListView(el, ['ID', 'Namespace', 'Type', 'Priority', 'Status', 'Allocations'], (j) => [
    html`<a href="${jobHref(j.ID, j.Namespace)}">${j.Name || j.ID}</a>`,
    j.Namespace, j.Type, j.Priority, badge(j.Stop ? 'stopped' : j.Status), summary(j),
  ], 'No jobs.');
  live(ctx, el, '/v1/jobs', { namespace: '*' }, (jobs) => {
    jobs.sort((a, b) => (a.ID < b.ID ? -1 : a.ID > b.ID ? 1 : 0));
    view.set(jobs);
    explainEmpty(ctx, notice, !jobs.length);
  }, { topics: ['Job'] });
}
