// Entry point: the token form and the router.

import { setToken, token } from './api.js';
import { start, draw } from './router.js';

const form = document.getElementById('token-form');
const input = document.getElementById('token');
input.value = token();
form.addEventListener('submit', (ev) => {
  ev.preventDefault();
  setToken(input.value.trim());
  draw();
});
start();
document.body.dataset.app = '1'; // the modules loaded and the router runs
