// /ui/allocations/<id>: an allocation's task states and events, a task's
// live log, and a link to the allocation's actors.

import { follow } from '../api.js';
import { html, badge, section, table, ago, errorText } from '../dom.js';
import { live, jobHref, nodeHref } from './common.js';

const MAX_LOG = 256 << 10; // characters of log kept on the page

export function render(root, { id }, ctx) {
  root.innerHTML = html`<h1>Allocation ${id}</h1>
<p><a href="/ui/actors?alloc=${encodeURIComponent(id)}">Actors of this allocation</a></p>`;
  const head = section(root, 'alloc');
  const logs = section(root, 'logs');
  let tasks = null;
  live(ctx, head, `/v1/allocation/${encodeURIComponent(id)}`, {}, (a) => {
    const states = a.TaskStates || {};
    head.innerHTML = html`<dl class="kv">
<dt>Job</dt><dd><a href="${jobHref(a.JobID, a.Namespace)}">${a.JobID}</a> (version ${a.Job?.Version ?? a.JobVersion ?? ''})</dd>
<dt>Task group</dt><dd>${a.TaskGroup}</dd>
<dt>Node</dt><dd><a href="${nodeHref(a.NodeID)}">${a.NodeName || a.NodeID}</a></dd>
<dt>Desired</dt><dd>${a.DesiredStatus}</dd><dt>Status</dt><dd>${badge(a.ClientStatus)}</dd></dl>
<h2>Tasks</h2>${table(['Task', 'State', 'Failed', 'Restarts', 'Started', 'Finished'],
      Object.entries(states).map(([n, s]) => [n, badge(s.State), s.Failed ? 'yes' : 'no', s.Restarts || 0,
        s.StartedAt || '—', s.FinishedAt || '—']), 'No task has started yet.')}
${Object.entries(states).map(([n, s]) => html`<h2>Events of ${n}</h2>${table(['Time', 'Type', 'Message'],
      (s.Events || []).slice().reverse().map((e) => [ago(e.Time), e.Type, e.DisplayMessage || e.Message || '']))}`)}`;
    const names = groupTasks(a);
    if (!tasks && names.length) {
      tasks = names;
      drawLogs(logs, id, tasks, ctx);
    }
  }, { topics: [`Allocation:${id}`] });
}

function groupTasks(a) {
  const g = (a.Job?.TaskGroups || []).find((tg) => tg.Name === a.TaskGroup);
  const names = (g?.Tasks || []).map((t) => t.Name);
  return names.length ? names : Object.keys(a.TaskStates || {});
}

// drawLogs shows one task's stdout or stderr as the task writes it.
function drawLogs(el, allocID, tasks, ctx) {
  el.innerHTML = html`<h2>Logs</h2>
<label>Task <select data-task>${tasks.map((t) => html`<option>${t}</option>`)}</select></label>
<label><input type="radio" name="logtype" value="stdout" checked> stdout</label>
<label><input type="radio" name="logtype" value="stderr"> stderr</label>
<pre class="logs" data-logs></pre><div data-log-error></div>`;
  const pre = el.querySelector('[data-logs]');
  const errEl = el.querySelector('[data-log-error]');
  let stream = null;
  const start = () => {
    if (stream) stream.abort();
    stream = new AbortController();
    ctx.signal.addEventListener('abort', () => stream.abort(), { once: true });
    pre.textContent = '';
    errEl.innerHTML = '';
    const task = el.querySelector('[data-task]').value;
    const type = el.querySelector('input[name=logtype]:checked').value;
    followLog(allocID, task, type, pre, errEl, stream.signal);
  };
  el.addEventListener('change', start);
  start();
}

async function followLog(allocID, task, type, pre, errEl, signal) {
  const path = `/v1/client/fs/logs/${encodeURIComponent(allocID)}`;
  const params = { task, type, follow: 'true', plain: 'true', origin: 'start' };
  // A log that does not exist yet (the task has not started) is asked
  // for again after a backoff; a stream that ended cleanly is done.
  for (let delay = 250; !signal.aborted; delay = Math.min(delay * 2, 5000)) {
    let failed = false;
    pre.textContent = '';
    await follow(path, params, (text) => {
      errEl.innerHTML = '';
      const stick = pre.scrollTop + pre.clientHeight >= pre.scrollHeight - 4;
      pre.textContent = (pre.textContent + text).slice(-MAX_LOG);
      if (stick) pre.scrollTop = pre.scrollHeight;
    }, (e) => { failed = true; errEl.innerHTML = errorText(e); }, signal);
    if (!failed) return;
    await new Promise((r) => setTimeout(r, delay));
  }
}
