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
// Adding or removing a server connects or closes that server alone (runtime.addServer /
// removeServer); the others keep their connections. A server may be given a bearer token
// (sent as `Authorization: Bearer …`) and headers of its own. A call shows its progress
// and can be cancelled (the server gets notifications/cancelled); "Raw JSON results" shows
// every result as the runtime returned it. The protocol panel logs every JSON-RPC message
// (runtime.onMessage), per server, bounded, newest last.
import { createRuntime } from './mcprt/index.js';

const kServersKey = 'mcprt-demo.servers';
// The protocol log keeps this many messages, each shown up to kLogMessageChars.
const kLogLimit = 300;
const kLogMessageChars = 20000;

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
  requests: new Map(),   // "server id" → method of a request sent and not answered yet
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
    const remove = el('button', { type: 'button', class: 'small remove', text: 'Remove' });
    remove.addEventListener('click', () => removeServer(name));
    const headerNames = Object.keys(state.servers[name].headers ?? {});
    list.append(el('li', { class: 'server', 'data-server': name },
      el('span', { class: 'server-name', text: name }),
      el('span', { class: 'url muted', text: state.servers[name].url }),
      headerNames.length ? el('span', { class: 'muted headers', text: `headers: ${headerNames.join(', ')}` }) : null,
      el('span', { class: `badge phase-${phase}`, 'data-phase': phase, text: phase }),
      el('span', { class: 'muted', text: `${count} tool${count === 1 ? '' : 's'}` }),
      status?.toolsFromCache ? el('span', { class: 'badge cached', text: 'cached' }) : null,
      authButton,
      remove,
      authError ? el('div', { class: 'error auth-error', text: authError }) : null,
      error && !authError ? el('div', { class: 'error', text: error.message }) : null));
  }
  renderLogServers();
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
  const raw = el('pre', { class: 'result-json', hidden: true });
  const button = el('button', { type: 'submit', text: 'Call' });
  const cancel = el('button', { type: 'button', class: 'cancel', text: 'Cancel', hidden: true });
  const progress = el('progress', { class: 'call-progress', hidden: true });
  const progressText = el('span', { class: 'progress-text muted' });
  let controller = null;
  cancel.addEventListener('click', () => controller?.abort(new DOMException('cancelled by the user', 'AbortError')));
  form.append(el('div', { class: 'call-buttons' }, button, cancel, progress, progressText), output, raw);
  const show = (cls, text, json) => {
    output.className = `result ${cls}`;
    output.hidden = false;
    output.textContent = text;
    raw.textContent = JSON.stringify(json, null, 2);
    raw.hidden = false;
  };
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    let args;
    try {
      args = readArguments(form);
    } catch (error) {
      show('error', error.message, { error: error.message });
      return;
    }
    controller = new AbortController();
    // Cancel, or a minute without an answer.
    const signal = AbortSignal.any ? AbortSignal.any([controller.signal, AbortSignal.timeout(60000)]) : controller.signal;
    button.disabled = true;
    cancel.hidden = false;
    progress.hidden = true;
    progress.removeAttribute('value');
    progressText.textContent = '';
    show('', 'calling…', null);
    raw.hidden = true;
    const onProgress = (p) => {
      progress.hidden = false;
      if (typeof p.total === 'number' && p.total > 0) progress.max = p.total;
      progress.value = p.progress;
      progressText.textContent = `${p.progress}${typeof p.total === 'number' ? ` / ${p.total}` : ''}${p.message ? ` ${p.message}` : ''}`;
    };
    try {
      const result = await rt.callTool(tool.name, args, { signal, onProgress });
      let text = result.text || JSON.stringify(result.content, null, 2);
      if (result.structuredContent !== undefined && result.structuredContent !== null) {
        text += `\n\nstructuredContent: ${JSON.stringify(result.structuredContent)}`;
      }
      show(result.isError ? 'error' : 'ok', text, result);
    } catch (error) {
      const cancelled = error.name === 'AbortError' && controller.signal.aborted;
      show(cancelled ? 'cancelled' : 'error', cancelled ? 'Cancelled (the server was told).' : `${error.name}: ${error.message}`,
           { name: error.name, message: error.message, ...(typeof error.code === 'string' ? { code: error.code } : {}) });
    } finally {
      controller = null;
      button.disabled = false;
      cancel.hidden = true;
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

// --- adding and removing servers ----------------------------------------------------------

// "Name: value" lines → {Name: value}; throws on a line that is not one.
function parseHeaders(text) {
  const headers = {};
  for (const [i, line] of text.split('\n').entries()) {
    if (line.trim() === '') continue;
    const colon = line.indexOf(':');
    const name = colon > 0 ? line.slice(0, colon).trim() : '';
    if (!/^[A-Za-z0-9!#$%&'*+.^_`|~-]+$/.test(name)) {
      throw new Error(`header line ${i + 1} is not "Name: value": ${JSON.stringify(line)}`);
    }
    headers[name] = line.slice(colon + 1).trim();
  }
  return headers;
}

function showAddError(message) {
  $('add-error').textContent = message;
  $('add-error').hidden = !message;
}

// A new server, or a known one with a changed config (the runtime replaces that
// connection alone).
async function addServer(name, config) {
  const previous = state.servers[name];
  state.servers[name] = config;
  state.statuses.delete(name);
  saveServers();
  renderServers();
  try {
    const added = await rt.addServer(name, config);
    const other = added.errors.filter((e) => !(e.server && rt.status(e.server)?.error));
    showAddError(other.map((e) => e.error).join('\n'));
  } catch (error) {
    // Refused (an invalid config, another server's endpoint): the runtime kept what the
    // server had, and so does the page.
    if (previous) state.servers[name] = previous;
    else delete state.servers[name];
    saveServers();
    showAddError(error.message);
  }
  renderServers();
  renderTools(rt.tools());
  await refreshAuth();
}

async function removeServer(name) {
  delete state.servers[name];
  state.statuses.delete(name);
  saveServers();
  renderServers();
  try {
    await rt.removeServer(name);
  } catch (error) {
    showAddError(`${name}: ${error.message}`);
  }
  renderServers();
}

function onAddServer(event) {
  event.preventDefault();
  const name = $('server-name').value.trim();
  const url = $('server-url').value.trim();
  if (!name || !url) return;
  let headers;
  try {
    headers = parseHeaders($('server-headers').value);
  } catch (error) {
    showAddError(error.message);
    return;
  }
  const token = $('server-token').value.trim();
  if (token) headers.Authorization = `Bearer ${token}`;
  const config = { url };
  if (Object.keys(headers).length) config.headers = headers;
  for (const id of ['server-name', 'server-url', 'server-token', 'server-headers']) $(id).value = '';
  showAddError('');
  addServer(name, config);
}

// --- the protocol log ----------------------------------------------------------------------

// What a message is, in one line: a request's or notification's method; a response names
// the method of the request it answers.
function describeMessage({ server, direction, message }) {
  const m = message && typeof message === 'object' ? message : {};
  const hasId = m.id !== undefined && m.id !== null;
  const key = `${server} ${direction === 'send' ? 'receive' : 'send'} ${JSON.stringify(m.id)}`;
  if (typeof m.method === 'string') {
    if (hasId) {
      state.requests.set(`${server} ${direction} ${JSON.stringify(m.id)}`, m.method);
      if (state.requests.size > 1000) state.requests.delete(state.requests.keys().next().value);
    }
    return { kind: hasId ? 'request' : 'notification', method: m.method };
  }
  const method = state.requests.get(key) ?? '';
  state.requests.delete(key);
  return { kind: 'error' in m ? 'error' : 'response', method };
}

function logMessage(entry) {
  const { kind, method } = describeMessage(entry);
  const { server, direction, message } = entry;
  let text = JSON.stringify(message, null, 2);
  if (text.length > kLogMessageChars) text = `${text.slice(0, kLogMessageChars)}\n… (${text.length - kLogMessageChars} more characters)`;
  const id = message?.id !== undefined && message?.id !== null ? ` #${JSON.stringify(message.id)}` : '';
  const label = `${direction === 'send' ? '→' : '←'} ${method || '(unknown request)'}${kind === 'response' ? ' result' : kind === 'error' ? ' error' : ''}${id}`;
  const log = $('protocol-log');
  const atEnd = log.scrollTop + log.clientHeight >= log.scrollHeight - 4;
  const item = el('li', { class: `msg ${direction} ${kind}`, 'data-server': server, 'data-direction': direction,
                          'data-method': method, 'data-kind': kind },
    el('details', {},
      el('summary', {}, el('span', { class: 'time muted', text: new Date().toLocaleTimeString() }),
         el('span', { class: 'server-name', text: server }), el('code', { text: label })),
      el('pre', { text })));
  const filter = $('log-server').value;
  item.hidden = filter !== '' && filter !== server;
  log.append(item);
  while (log.children.length > kLogLimit) log.firstElementChild.remove();
  if (atEnd) log.scrollTop = log.scrollHeight;
}

function renderLogServers() {
  const select = $('log-server');
  const chosen = select.value;
  const names = [...new Set([...Object.keys(state.servers), ...[...$('protocol-log').children].map((li) => li.dataset.server)])].sort();
  select.replaceChildren(el('option', { value: '', text: 'all' }), ...names.map((n) => el('option', { value: n, text: n })));
  select.value = names.includes(chosen) ? chosen : '';
}

function filterLog() {
  const filter = $('log-server').value;
  for (const li of $('protocol-log').children) li.hidden = filter !== '' && filter !== li.dataset.server;
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
  rt.onMessage(logMessage);
  $('log-limit').textContent = String(kLogLimit);
  $('log-server').addEventListener('change', filterLog);
  $('log-clear').addEventListener('click', () => $('protocol-log').replaceChildren());
  $('raw-json').addEventListener('change', (event) => document.body.classList.toggle('raw-json', event.target.checked));
  $('add-server').addEventListener('submit', onAddServer);
  window.addEventListener('pagehide', () => rt.dispose());
  renderServers();
  renderTools([]);
  await load();
}

main().catch((error) => {
  $('load-errors').textContent = `The runtime did not start: ${error.message}`;
  $('load-errors').hidden = false;
});
