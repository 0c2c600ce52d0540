// The client-side router: Nomad's UI URL shapes mapped to page modules.
// Each page is render(root, params, ctx); ctx.signal aborts when the user
// leaves the page (ending its blocking queries and log streams), and
// ctx.track() counts a section to draw: when every one has, the page is
// marked ready (the Performance API mark troupe:ready); ctx.events is
// the page's event stream (events.js).

import * as jobs from './pages/jobs.js';
import * as job from './pages/job.js';
import * as alloc from './pages/alloc.js';
import * as clients from './pages/clients.js';
import * as client from './pages/client.js';
import * as volumes from './pages/volumes.js';
import * as plugins from './pages/plugins.js';
import * as servers from './pages/servers.js';
import * as actors from './pages/actors.js';
import { EventFeed } from './events.js';

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
  // The page is ready when every section it follows has drawn once, and
  // complete when each has drawn all of its data (a long list may draw
  // the rows in view first: pages/common.js liveList).
  let pending = 1;
  let whole = 1;
  const done = () => {
    if (--pending !== 0 || ctx.signal.aborted) return;
    performance.mark('troupe:ready');
    document.body.dataset.ready = '1';
  };
  const complete = () => {
    if (--whole !== 0 || ctx.signal.aborted) return;
    performance.mark('troupe:complete');
    document.body.dataset.complete = '1';
  };
  const ctx = {
    signal: current.signal,
    // events is the page's one event stream, shared by its sections.
    events: new EventFeed(current.signal),
    query: new URLSearchParams(location.search),
    // track says one more section is to draw; call what it returns once
    // that section has drawn its data (or its error), and its part()
    // once it has drawn the part in view of a long list, if it draws
    // that first.
    track() {
      pending++;
      whole++;
      const once = (f) => { let called = false; return () => { if (!called) { called = true; f(); } }; };
      const part = once(done);
      const drawn = once(() => { part(); complete(); });
      drawn.part = part;
      return drawn;
    },
  };
  document.body.dataset.complete = '';
  m.page.render(root, m.params, ctx);
  done(); // the sections it started are counted now
  complete();
}

export function start() {
  document.addEventListener('click', (ev) => {
    const a = ev.target.closest('a[href^="/ui"]');
    if (!a || ev.metaKey || ev.ctrlKey || ev.shiftKey || a.target) return;
    ev.preventDefault();
    navigate(a.getAttribute('href'));
  });
  window.addEventListener('popstate', () => draw());
  // Leaving the document ends its blocking reads and log streams at once.
  window.addEventListener('pagehide', () => current?.abort());
  draw();
}
