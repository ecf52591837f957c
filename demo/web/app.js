// The mcprt demo page: lists the tools of remote MCP servers through the `mcprt` JS
// package (served under ./mcprt/ by `mcprt serve-demo`), shows each server's status live,
// calls a tool from a form built from its input schema. The server list lives in
// localStorage and the tools in the runtime's IndexedDB cache, so a reload shows the
// cached tools at once while the connections come up. A server that wants an OAuth
// sign-in shows 'needs-auth' with a "Sign in" button: runtime.auth.login() from the click
// opens the authorization server in a popup (mcprt/oauth-callback.html brings the redirect
// back); signed-in servers get "Sign out". A server that asks the user for input
// (elicitation) gets a modal dialog: its name and message, one field per property of the
// requested schema (defaults filled in), Accept / Decline / Cancel; in URL mode the full
// URL and a question before anything opens. One dialog at a time.
import { createRuntime } from './mcprt/index.js';

const kServersKey = 'mcprt-demo.servers';

const $ = (id) => document.getElementById(id);

function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (value === undefined || value === null || value === false) continue;
    if (key === 'class') node.className = value;
    else if (key === 'text') node.textContent = value;
    else node.setAttribute(key, value === true ? '' : String(value));
  }
  for (const child of children) if (child !== null && child !== undefined) node.append(child);
  return node;
}

// The server list: {name: {url}}. First visit: the demo server `mcprt serve-demo` started
// (from ./config.json), when there is one.
async function initialServers() {
  try {
    const saved = JSON.parse(localStorage.getItem(kServersKey) ?? 'null');
    if (saved && typeof saved === 'object') return saved;
  } catch {
    // A corrupt entry: start over.
  }
  try {
    const response = await fetch('./config.json', { cache: 'no-store' });
    if (response.ok) {
      const config = await response.json();
      if (typeof config.demoServerUrl === 'string') return { demo: { url: config.demoServerUrl } };
    }
  } catch {
    // Served by something else than serve-demo: no pre-filled server.
  }
  return {};
}

const state = {
  servers: {},
  statuses: new Map(),  // server → last StatusEvent
  auth: new Map(),      // server → AuthStatus (never a token)
  signingIn: new Set(), // servers whose sign-in is running
  authErrors: new Map(),  // server → the last sign-in's error message
  loading: false,
  openForms: new Set(),  // tool names whose call form is open (kept across re-renders)
};

let rt;

function saveServers() {
  localStorage.setItem(kServersKey, JSON.stringify(state.servers));
}

function renderServers() {
  const list = $('servers');
  list.replaceChildren();
  const names = Object.keys(state.servers).sort();
  if (names.length === 0) list.append(el('li', { class: 'muted', text: 'No servers yet: add one above.' }));
  for (const name of names) {
    const event = state.statuses.get(name);
    const status = rt?.status(name);
    const phase = event?.phase ?? status?.phase ?? (state.loading ? 'connecting' : 'unknown');
    const error = event?.error ?? status?.error;
    const count = status?.toolCount ?? event?.toolCount ?? 0;
    const signedIn = state.auth.get(name)?.signedIn === true;
    let authButton = null;
    if (phase === 'needs-auth' || state.signingIn.has(name)) {
      authButton = el('button', { type: 'button', class: 'small sign-in', text: state.signingIn.has(name) ? 'Signing in…' : 'Sign in',
                                  disabled: state.signingIn.has(name) });
      // Straight from the click: the sign-in popup opens only while it counts.
      authButton.addEventListener('click', () => signIn(name));
    } else if (signedIn) {
      authButton = el('button', { type: 'button', class: 'small sign-out', text: 'Sign out' });
      authButton.addEventListener('click', () => signOut(name));
    }
    const authError = state.authErrors.get(name);
    const remove = el('button', { type: 'button', class: 'small', text: 'Remove' });
    remove.addEventListener('click', () => {
      delete state.servers[name];
      state.statuses.delete(name);
      saveServers();
      load();
    });
    list.append(el('li', { class: 'server', 'data-server': name },
      el('span', { class: 'server-name', text: name }),
      el('span', { class: 'url muted', text: state.servers[name].url }),
      el('span', { class: `badge phase-${phase}`, 'data-phase': phase, text: phase }),
      el('span', { class: 'muted', text: `${count} tool${count === 1 ? '' : 's'}` }),
      status?.toolsFromCache ? el('span', { class: 'badge cached', text: 'cached' }) : null,
      authButton,
      remove,
      authError ? el('div', { class: 'error auth-error', text: authError }) : null,
      error && !authError ? el('div', { class: 'error', text: error.message }) : null));
  }
}

// One form field per input-schema property; the value is converted back by its type.
function fieldFor(name, schema, required) {
  const label = el('label', { class: 'field' },
                   el('span', { text: `${name}${required ? ' *' : ''}` }));
  let input;
  const type = Array.isArray(schema.type) ? schema.type[0] : schema.type;
  if (Array.isArray(schema.enum)) {
    input = el('select', { name });
    if (!required) input.append(el('option', { value: '', text: '' }));
    for (const v of schema.enum) input.append(el('option', { value: JSON.stringify(v), text: String(v) }));
    input.dataset.kind = 'enum';
  } else if (type === 'boolean') {
    input = el('input', { type: 'checkbox', name });
    input.dataset.kind = 'boolean';
  } else if (type === 'number' || type === 'integer') {
    input = el('input', { type: 'number', name, step: type === 'integer' ? '1' : 'any', required });
    input.dataset.kind = 'number';
  } else if (type === 'string') {
    input = el('input', { type: 'text', name, required });
    input.dataset.kind = 'string';
  } else {
    input = el('textarea', { name, rows: 2, placeholder: 'JSON', required });
    input.dataset.kind = 'json';
  }
  if (schema.default !== undefined && input.dataset.kind !== 'boolean') {
    input.value = input.dataset.kind === 'json' || input.dataset.kind === 'enum'
      ? JSON.stringify(schema.default) : String(schema.default);
  } else if (schema.default === true) {
    input.checked = true;
  }
  label.append(input);
  if (schema.description) label.append(el('small', { class: 'muted', text: schema.description }));
  return label;
}

function readArguments(form) {
  const args = {};
  for (const input of form.querySelectorAll('[data-kind]')) {
    const kind = input.dataset.kind;
    if (kind === 'boolean') {
      args[input.name] = input.checked;
      continue;
    }
    if (input.value === '') continue;  // omitted (the server checks what is required)
    if (kind === 'number') args[input.name] = Number(input.value);
    else if (kind === 'string') args[input.name] = input.value;
    else {
      try {
        args[input.name] = JSON.parse(input.value);
      } catch {
        throw new Error(`${input.name}: not valid JSON`);
      }
    }
  }
  return args;
}

function callForm(tool) {
  const schema = tool.inputSchema ?? {};
  const properties = schema.properties && typeof schema.properties === 'object' ? schema.properties : {};
  const required = new Set(Array.isArray(schema.required) ? schema.required : []);
  const form = el('form', { class: 'call', 'data-tool': tool.name });
  for (const [name, property] of Object.entries(properties)) {
    form.append(fieldFor(name, property && typeof property === 'object' ? property : {}, required.has(name)));
  }
  const output = el('pre', { class: 'result', hidden: true });
  const button = el('button', { type: 'submit', text: 'Call' });
  form.append(button, output);
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    output.hidden = false;
    output.className = 'result';
    let args;
    try {
      args = readArguments(form);
    } catch (error) {
      output.classList.add('error');
      output.textContent = error.message;
      return;
    }
    button.disabled = true;
    output.textContent = 'calling…';
    try {
      const result = await rt.callTool(tool.name, args, { signal: AbortSignal.timeout(60000) });
      output.classList.add(result.isError ? 'error' : 'ok');
      output.textContent = result.text || JSON.stringify(result.content, null, 2);
      if (result.structuredContent !== undefined && result.structuredContent !== null) {
        output.textContent += `\n\nstructuredContent: ${JSON.stringify(result.structuredContent)}`;
      }
    } catch (error) {
      output.classList.add('error');
      output.textContent = `${error.name}: ${error.message}`;
    } finally {
      button.disabled = false;
    }
  });
  return form;
}

function renderTools(tools) {
  const container = $('tools');
  // Keep the open call forms (and their typed values and results) across updates.
  const kept = new Map();
  for (const details of container.querySelectorAll('details.tool[open]')) kept.set(details.dataset.tool, details);
  container.replaceChildren();
  $('tool-count').textContent = `(${tools.length})`;
  if (tools.length === 0) {
    container.append(el('p', { class: 'muted', text: state.loading ? 'Loading…' : 'No tools.' }));
    return;
  }
  for (const tool of tools) {
    const existing = kept.get(tool.name);
    const summary = el('summary', { title: tool.label },
      el('code', { class: 'tool-name', text: tool.name }),
      tool.deferred ? el('span', { class: 'badge cached', text: 'cached' }) : null,
      el('span', { class: 'description muted', text: tool.description || '(no description)' }));
    if (existing && !tool.deferred) {
      existing.querySelector('summary').replaceWith(summary);
      existing.dataset.deferred = 'false';
      container.append(existing);
      continue;
    }
    const details = el('details', { class: 'tool', 'data-tool': tool.name, 'data-deferred': String(tool.deferred) },
      summary,
      el('p', { class: 'muted', text: `Server ${tool.server}, tool ${tool.tool}` }),
      el('details', { class: 'schema' }, el('summary', { text: 'Input schema' }),
         el('pre', { text: JSON.stringify(tool.inputSchema, null, 2) })),
      callForm(tool));
    if (existing) details.open = true;
    container.append(details);
  }
}

async function refreshAuth() {
  try {
    const statuses = await rt.auth.status();
    state.auth = new Map(statuses.map((s) => [s.server, s]));
  } catch {
    state.auth = new Map();  // no credential store (IndexedDB blocked): nothing to show
  }
  renderServers();
}

function signIn(name) {
  state.signingIn.add(name);
  state.authErrors.delete(name);
  const done = rt.auth.login(name);  // called in the click handler: the popup may open
  renderServers();
  done.catch((error) => state.authErrors.set(name, `Sign-in failed: ${error.message}`))
    .finally(() => {
      state.signingIn.delete(name);
      refreshAuth();
    });
}

async function signOut(name) {
  state.authErrors.delete(name);
  try {
    await rt.auth.logout(name);
  } catch (error) {
    state.authErrors.set(name, `Sign-out failed: ${error.message}`);
  }
  await refreshAuth();
}

// --- elicitation: the modal dialog ---------------------------------------------------------

let dialogQueue = Promise.resolve();

// The choices of an enum property: [{value, label}] from `enum` or oneOf/anyOf {const, title}.
function choicesOf(schema) {
  if (Array.isArray(schema.enum)) {
    const names = Array.isArray(schema.enumNames) && schema.enumNames.length === schema.enum.length ? schema.enumNames : null;
    return schema.enum.map((value, i) => ({ value, label: names ? String(names[i]) : String(value) }));
  }
  for (const key of ['oneOf', 'anyOf']) {
    if (!Array.isArray(schema[key])) continue;
    const list = schema[key].filter((o) => o && typeof o === 'object' && 'const' in o);
    if (list.length) return list.map((o) => ({ value: o.const, label: o.title ? String(o.title) : String(o.const) }));
  }
  return null;
}

// One field of the elicitation form; `read()` gives its value (undefined = left out).
function elicitField(name, schema, required) {
  const title = typeof schema.title === 'string' && schema.title ? schema.title : name;
  const label = el('label', { class: 'field' }, el('span', { text: `${title}${required ? ' *' : ''}` }));
  const type = schema.type;
  let input;
  let read;
  const choices = type === 'array' ? choicesOf(schema.items ?? {}) : choicesOf(schema);
  if (type === 'array' && choices) {
    input = el('span', { class: 'choices' });
    const defaults = Array.isArray(schema.default) ? schema.default.map((v) => JSON.stringify(v)) : [];
    const boxes = choices.map((c) => {
      const box = el('input', { type: 'checkbox', value: JSON.stringify(c.value), 'data-field': name });
      box.checked = defaults.includes(box.value);
      input.append(el('label', {}, box, ` ${c.label}`));
      return box;
    });
    read = () => boxes.filter((b) => b.checked).map((b) => JSON.parse(b.value));
  } else if (choices) {
    input = el('select', { 'data-field': name, required });
    if (!required || schema.default === undefined) input.append(el('option', { value: '', text: '' }));
    for (const c of choices) input.append(el('option', { value: JSON.stringify(c.value), text: c.label }));
    if (schema.default !== undefined) input.value = JSON.stringify(schema.default);
    read = () => (input.value === '' ? undefined : JSON.parse(input.value));
  } else if (type === 'boolean') {
    input = el('input', { type: 'checkbox', 'data-field': name });
    input.checked = schema.default === true;
    read = () => input.checked;
  } else if (type === 'number' || type === 'integer') {
    input = el('input', { type: 'number', 'data-field': name, step: type === 'integer' ? '1' : 'any', required,
                          min: schema.minimum, max: schema.maximum });
    if (typeof schema.default === 'number') input.value = String(schema.default);
    read = () => (input.value === '' ? undefined : Number(input.value));
  } else {
    const kind = { email: 'email', uri: 'url', date: 'date', 'date-time': 'datetime-local' }[schema.format] ?? 'text';
    input = el('input', { type: kind, 'data-field': name, required, minlength: schema.minLength, maxlength: schema.maxLength });
    if (typeof schema.default === 'string') input.value = schema.default;
    read = () => (input.value === '' ? undefined : input.value);
  }
  label.append(input);
  if (typeof schema.description === 'string' && schema.description) {
    label.append(el('small', { class: 'muted', text: schema.description }));
  }
  return { label, read };
}

// Shows one request in the modal dialog; resolves with {action, content?}.
function showElicitation(request) {
  return new Promise((resolve) => {
    const dialog = $('elicit-dialog');
    const body = $('elicit-body');
    const buttons = $('elicit-buttons');
    $('elicit-server').textContent = request.server;
    $('elicit-message').textContent = request.message;
    body.replaceChildren();
    buttons.replaceChildren();
    dialog.dataset.mode = request.mode;
    let settled = false;
    const finish = (answer) => {
      if (settled) return;
      settled = true;
      dialog.close();
      resolve(answer);
    };
    const button = (text, cls, onClick, type = 'button') => {
      const b = el('button', { type, class: cls, text });
      if (onClick) b.addEventListener('click', onClick);
      buttons.append(b);
      return b;
    };
    let fields = [];
    if (request.mode === 'url') {
      let host = '';
      try {
        host = new URL(request.url).host;
      } catch {
        host = '(not a valid URL)';
      }
      body.append(el('p', { text: 'It asks you to open this page:' }),
                  el('code', { class: 'elicit-url', text: request.url }),
                  el('p', { class: 'muted', text: `Site: ${host}. Open it only if you trust it.` }));
      button('Open page', 'accept', () => {
        window.open(request.url, '_blank', 'noopener,noreferrer');
        finish({ action: 'accept' });
      });
    } else {
      const schema = request.requestedSchema ?? {};
      const properties = schema.properties && typeof schema.properties === 'object' ? schema.properties : {};
      const required = new Set(Array.isArray(schema.required) ? schema.required : []);
      fields = Object.entries(properties).map(([name, property]) => {
        const f = elicitField(name, property && typeof property === 'object' ? property : {}, required.has(name));
        body.append(f.label);
        return [name, f];
      });
      button('Accept', 'accept', null, 'submit');
    }
    button('Decline', 'decline', () => finish({ action: 'decline' }));
    button('Cancel', 'cancel', () => finish({ action: 'cancel' }));
    const form = $('elicit-form');
    form.onsubmit = (event) => {
      event.preventDefault();
      if (request.mode === 'url') return;
      const content = {};
      for (const [name, f] of fields) {
        const value = f.read();
        if (value !== undefined) content[name] = value;
      }
      finish({ action: 'accept', content });
    };
    dialog.oncancel = (event) => {  // Escape
      event.preventDefault();
      finish({ action: 'cancel' });
    };
    dialog.showModal();
  });
}

// Requests wait for the dialog in turn.
function onElicit(request) {
  const answer = dialogQueue.then(() => showElicitation(request));
  dialogQueue = answer.catch(() => {});
  return answer;
}

async function load() {
  state.loading = true;
  renderServers();
  $('load-errors').hidden = true;
  try {
    const loaded = await rt.discoverAndLoad({ servers: state.servers });
    // A server's own row shows its connection error; list here only the others (config
    // and validation errors).
    const messages = loaded.errors
      .filter((e) => !(e.server && rt.status(e.server)?.error))
      .map((e) => (e.server ? `${e.server}: ${e.error}` : e.error));
    if (messages.length) {
      $('load-errors').textContent = messages.join('\n');
      $('load-errors').hidden = false;
    }
  } catch (error) {
    $('load-errors').textContent = `${error.name}: ${error.message}`;
    $('load-errors').hidden = false;
  } finally {
    state.loading = false;
    renderServers();
    renderTools(rt.tools());
  }
  await refreshAuth();
}

async function main() {
  [state.servers, rt] = await Promise.all([
    initialServers(),
    createRuntime({ logLevel: 'warn', sourceName: 'demo page', onElicit }),
  ]);
  rt.onStatus((event) => {
    state.statuses.set(event.server, event);
    renderServers();
  });
  rt.onToolsChanged((tools) => {
    renderTools(tools);
    renderServers();
  });
  $('add-server').addEventListener('submit', (event) => {
    event.preventDefault();
    const name = $('server-name').value.trim();
    const url = $('server-url').value.trim();
    if (!name || !url) return;
    state.servers[name] = { url };
    saveServers();
    $('server-name').value = '';
    $('server-url').value = '';
    load();
  });
  window.addEventListener('pagehide', () => rt.dispose());
  renderServers();
  renderTools([]);
  await load();
}

main().catch((error) => {
  $('load-errors').textContent = `The runtime did not start: ${error.message}`;
  $('load-errors').hidden = false;
});
