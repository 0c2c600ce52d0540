// The client-side router: Nomad's UI URL shapes mapped to page modules.
// Each page is render(root, params, ctx); ctx.signal aborts when the user
// leaves the page (ending its blocking queries and log streams), and
// ctx.ready() marks the first draw of the page's data.

import * as jobs from './pages/jobs.js';
import * as job from './pages/job.js';
import * as alloc from './pages/alloc.js';
import * as clients from './pages/clients.js';
import * as client from './pages/client.js';
import * as volumes from './pages/volumes.js';
import * as plugins from './pages/plugins.js';
import * as servers from './pages/servers.js';
import * as actors from './pages/actors.js';

const routes = [
  [/^\/ui\/?$/, jobs],
  [/^\/ui\/jobs\/?$/, jobs],
  [/^\/ui\/jobs\/([^/]+?)(?:@([^/]+))?\/?$/, job, ['id', 'namespace']],
  [/^\/ui\/allocations\/([^/]+)\/?$/, alloc, ['id']],
  [/^\/ui\/clients\/?$/, clients],
  [/^\/ui\/clients\/([^/]+)\/?$/, client, ['id']],
  [/^\/ui\/csi\/?$/, volumes],
  [/^\/ui\/csi\/volumes\/?$/, volumes],
  [/^\/ui\/csi\/plugins\/?$/, plugins],
  [/^\/ui\/servers\/?$/, servers],
  [/^\/ui\/actors\/?$/, actors],
];

let current = null;

export function match(pathname) {
  for (const [re, page, names = []] of routes) {
    const m = re.exec(pathname);
    if (!m) continue;
    const params = {};
    names.forEach((n, i) => { params[n] = m[i + 1] === undefined ? undefined : decodeURIComponent(m[i + 1]); });
    return { page, params };
  }
  return null;
}

export function navigate(href, push = true) {
  if (push) history.pushState(null, '', href);
  draw();
}

export function draw() {
  if (current) current.abort();
  current = new AbortController();
  const root = document.getElementById('main');
  root.innerHTML = '';
  document.body.dataset.ready = '';
  for (const a of document.querySelectorAll('header nav a')) {
    a.classList.toggle('active', location.pathname.startsWith(a.getAttribute('href')));
  }
  const m = match(location.pathname);
  if (!m) {
    root.innerHTML = '<h1>Not found</h1><p class="muted">No page at this address.</p>';
    return;
  }
  let marked = false;
  const ctx = {
    signal: current.signal,
    query: new URLSearchParams(location.search),
    ready() {
      if (marked) return;
      marked = true;
      performance.mark('troupe:ready');
      document.body.dataset.ready = '1';
    },
  };
  m.page.render(root, m.params, ctx);
}

export function start() {
  document.addEventListener('click', (ev) => {
    const a = ev.target.closest('a[href^="/ui"]');
    if (!a || ev.metaKey || ev.ctrlKey || ev.shiftKey || a.target) return;
    ev.preventDefault();
    navigate(a.getAttribute('href'));
  });
  window.addEventListener('popstate', () => draw());
  draw();
}
