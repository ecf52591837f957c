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
// Three tabs show what the servers offer: Tools; Resources (each server's resources and
// templates: opening one reads it — text as text, an image as an image, other binary
// contents as a download; a template's variables are filled first, with the server's
// completions as suggestions; Subscribe shows a resource's updates live); Prompts (a form
// for each prompt's arguments, with completions, and the messages Get makes). Everything a
// server sends is shown as text, never as HTML.
// Tool search (SPEC §16): above the tool list, a search box over the runtime's catalog
// shows the ranked hits as you type (name, server, how it matched, score, summary), each
// with a Load button, the tools loaded for the model, and the mode (auto / on / off, kept
// in localStorage); the line under the box says what a model would be given.
import { createRuntime } from './mcprt/index.js';

const kServersKey = 'mcprt-demo.servers';
const kToolSearchKey = 'mcprt-demo.toolSearch';
const kSearchHits = 10;
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
      catalogCounts(status),
      status?.toolsFromCache ? el('span', { class: 'badge cached', text: 'cached' }) : null,
      authButton,
      remove,
      authError ? el('div', { class: 'error auth-error', text: authError }) : null,
      error && !authError ? el('div', { class: 'error', text: error.message }) : null));
  }
  renderLogServers();
}

const plural = (n, word) => `${n} ${word}${n === 1 ? '' : 's'}`;

// "3 resources, 1 template, 2 prompts" of a server's status (only the kinds it has).
function catalogCounts(status) {
  const parts = [];
  if (status?.resourceCount) parts.push(plural(status.resourceCount, 'resource'));
  if (status?.resourceTemplateCount) parts.push(plural(status.resourceTemplateCount, 'template'));
  if (status?.promptCount) parts.push(plural(status.promptCount, 'prompt'));
  return parts.length ? el('span', { class: 'muted catalog-counts', text: parts.join(', ') }) : null;
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
      ...hintBadges(tool),
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

// The tool's read-only / destructive hints; the server's own claims unless the host trusts it.
function hintBadges(tool) {
  const a = tool.annotations ?? {};
  const trust = tool.annotationsTrusted ? '' : ' (claimed by the server, not verified)';
  const badges = [];
  if (a.readOnlyHint === true) badges.push(el('span', { class: 'badge hint', title: `Read-only${trust}`, text: 'read-only' }));
  if (a.destructiveHint === true && a.readOnlyHint !== true) {
    badges.push(el('span', { class: 'badge hint destructive', title: `May change or delete data${trust}`, text: 'destructive' }));
  }
  return badges;
}

// --- tool search ---------------------------------------------------------------------------

function savedToolSearch() {
  const mode = localStorage.getItem(kToolSearchKey);
  return ['auto', 'on', 'off'].includes(mode) ? mode : 'auto';
}

// The search box's hits (live, as typed), the loaded set and what the model is given.
function renderSearch() {
  const catalog = rt.catalog();
  const visibleToModel = new Set(catalog.filter((t) => t.loaded).map((t) => t.name));
  const loaded = new Set(rt.loadedTools());
  const active = rt.toolSearchActive();
  const mode = $('search-mode').value;
  const auto = `auto: ${plural(catalog.length, 'tool')}, ${active ? 'more than' : 'at most'} 30`;
  $('search-state').textContent = active
    ? `Tool search active (${mode === 'auto' ? auto : mode}): a model is given ${rt.visibleTools().length} of ` +
      `${catalog.length + 1} tools — the loaded ones and mcp_tool_search, which finds and loads the others.`
    : `Tool search inactive (${mode === 'auto' ? auto : mode}): a model is given every tool.`;
  const list = $('search-hits');
  const query = $('search-query').value;
  list.replaceChildren();
  if (query.trim() !== '') {
    const hits = rt.searchTools(query, { limit: kSearchHits });
    if (hits.length === 0) list.append(el('li', { class: 'muted none', text: 'No tool matches.' }));
    for (const [i, hit] of hits.entries()) {
      // Inactive: everything is given to the model. Active: loaded by a search or a call,
      // kept loaded by its server (alwaysLoad, instructions that name it), or deferred.
      let action = null;
      if (!active) {
        action = null;
      } else if (loaded.has(hit.name)) {
        action = el('span', { class: 'badge loaded', text: 'loaded' });
      } else if (visibleToModel.has(hit.name)) {
        action = el('span', { class: 'badge loaded always', text: 'always loaded',
                              title: "Its server keeps it loaded (alwaysLoad, or its instructions name it)" });
      } else {
        action = el('button', { type: 'button', class: 'small load', text: 'Load' });
        action.addEventListener('click', () => {
          rt.loadTools([hit.name]);
          renderSearch();
        });
      }
      list.append(el('li', { class: 'hit', 'data-tool': hit.name, 'data-match': hit.match },
        el('span', { class: 'rank', text: `${i + 1}.` }),
        el('code', { class: 'tool-name', text: hit.name }),
        el('span', { class: 'badge server-badge', text: hit.server }),
        el('span', { class: `badge match match-${hit.match}`, text: hit.match }),
        hit.score > 0 ? el('span', { class: 'score muted', text: `score ${hit.score.toFixed(2)}` }) : null,
        action,
        el('span', { class: 'summary muted', text: hit.summary || '(no description)' })));
    }
  }
  $('loaded-tools').replaceChildren(...(loaded.size ? [...loaded].map((n) => el('li', { 'data-tool': n }, el('code', { text: n })))
    : [el('li', { class: 'muted', text: 'none' })]));
}

// --- tabs, resources and prompts ----------------------------------------------------------

function selectTab(name) {
  for (const button of document.querySelectorAll('#tabs [role="tab"]')) {
    const selected = button.dataset.tab === name;
    button.setAttribute('aria-selected', String(selected));
    $(`${button.dataset.tab}-section`).hidden = !selected;
  }
}

function renderTabCounts() {
  const counts = {
    tools: rt.tools().length,
    resources: rt.resources().length + rt.resourceTemplates().length,
    prompts: rt.prompts().length,
  };
  for (const span of document.querySelectorAll('#tabs [data-count]')) span.textContent = `(${counts[span.dataset.count]})`;
}

let nextListId = 1;

// The byte count of a base64 text, or -1 when it is not base64.
function base64Size(text) {
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(text) || text.length % 4 === 1) return -1;
  const padding = text.endsWith('==') ? 2 : text.endsWith('=') ? 1 : 0;
  return Math.floor((text.length * 3) / 4) - padding;
}

function formatBytes(n) {
  if (n < 1024) return `${n} B`;
  return n < 1048576 ? `${(n / 1024).toFixed(1)} KiB` : `${(n / 1048576).toFixed(1)} MiB`;
}

// One item of a resource's contents (also a prompt message's embedded resource): text as
// text, an image/* blob as an <img>, any other blob as a download link with its size.
function renderContent(item) {
  const c = item && typeof item === 'object' ? item : {};
  const mime = typeof c.mimeType === 'string' ? c.mimeType : '';
  const box = el('div', { class: 'content-item' },
    el('div', { class: 'content-head' }, el('code', { class: 'uri', text: String(c.uri ?? '') }), ' ',
       mime ? el('span', { class: 'badge mime', text: mime }) : null));
  if (typeof c.text === 'string') {
    box.classList.add('text');
    box.append(el('pre', { class: 'content-text', text: c.text }));
    return box;
  }
  if (typeof c.blob !== 'string') {
    box.append(el('pre', { text: JSON.stringify(c, null, 2) }));
    return box;
  }
  const blob = c.blob.replace(/\s+/g, '');
  const size = base64Size(blob);
  if (size < 0) {
    box.append(el('p', { class: 'error', text: 'The server sent a blob that is not base64.' }));
    return box;
  }
  if (/^image\/[A-Za-z0-9.+-]+$/.test(mime)) {
    box.classList.add('image');
    box.append(el('img', { src: `data:${mime};base64,${blob}`, alt: `${c.uri ?? 'image'} (${mime})` }),
               el('div', { class: 'muted', text: formatBytes(size) }));
    return box;
  }
  box.classList.add('binary');
  const name = String(c.uri ?? '').split(/[/:?#]/).filter(Boolean).pop() || 'resource';
  box.append(el('a', { class: 'download', href: `data:application/octet-stream;base64,${blob}`, download: name,
                       text: `Download ${name} (${formatBytes(size)})` }));
  return box;
}

// Suggestions for `input` from the server's completions (completion/complete), asked on
// focus and on every change; an older answer never replaces a newer one.
function completeInto(input, request) {
  const list = el('datalist', { id: `completions-${nextListId++}` });
  input.setAttribute('list', list.id);
  let asked = 0;
  const ask = async () => {
    const mine = ++asked;
    let values = [];
    try {
      ({ values } = await rt.complete(request(input.value)));
    } catch {
      // No completions (the server has none for it): no suggestions.
    }
    if (mine !== asked) return;
    list.replaceChildren(...values.slice(0, 100).map((v) => el('option', { value: v })));
    input.dataset.suggestions = values.join('\n');
  };
  input.addEventListener('focus', ask);
  input.addEventListener('input', ask);
  return list;
}

// A resource read into `contents` (replacing what was there).
async function readInto(contents, status, uri, server) {
  status.textContent = 'reading…';
  status.className = 'read-status muted';
  try {
    const result = await rt.readResource(uri, { server });
    const items = Array.isArray(result?.contents) ? result.contents : [];
    contents.replaceChildren(...items.map(renderContent));
    status.textContent = items.length ? `read at ${new Date().toLocaleTimeString()}` : 'The resource is empty.';
  } catch (error) {
    contents.replaceChildren();
    status.textContent = `${error.name}: ${error.message}`;
    status.className = 'read-status error';
  }
}

// Keyed so that a re-render keeps each box as it is (open, its contents, its typed values).
const catalogNodes = new Map();
const subscriptions = new Map();  // "server uri" → {off: Promise of the unsubscribe function}

function entrySummary(entry, key, ...extra) {
  return el('summary', {},
    el('span', { class: 'entry-name', text: entry.title || entry.name }),
    el('code', { class: 'uri', text: key }),
    entry.mimeType ? el('span', { class: 'badge mime', text: entry.mimeType }) : null,
    el('span', { class: 'badge cached', text: 'cached', hidden: !entry.fromCache }),
    ...extra);
}

function resourceNode(resource) {
  const key = `${resource.server} ${resource.uri}`;
  const contents = el('div', { class: 'contents' });
  const status = el('p', { class: 'read-status muted' });
  const updates = el('span', { class: 'badge updated', hidden: true });
  let subscribe = null;
  const details = el('details', { class: 'resource', 'data-server': resource.server, 'data-uri': resource.uri });
  const read = () => readInto(contents, status, resource.uri, resource.server);
  if (resource.subscribable) {
    subscribe = el('button', { type: 'button', class: 'small subscribe', 'aria-pressed': 'false', text: 'Subscribe' });
    subscribe.addEventListener('click', (event) => {
      event.preventDefault();  // not a click on the summary: the box stays as it is
      toggleSubscription(key, resource, subscribe, updates, () => {
        details.open = true;
        read();
      });
    });
  }
  const again = el('button', { type: 'button', class: 'small read-again', text: 'Read again' });
  again.addEventListener('click', read);
  details.append(entrySummary(resource, resource.uri, updates, subscribe),
    resource.description ? el('p', { class: 'muted', text: resource.description }) : null,
    el('div', { class: 'call-buttons' }, again, status),
    contents);
  details.addEventListener('toggle', () => {
    if (details.open && !details.dataset.read) {
      details.dataset.read = 'true';
      read();
    }
  });
  return details;
}

// Subscribe / Unsubscribe: each update counts in the badge and reads the resource again.
async function toggleSubscription(key, resource, button, badge, onUpdate) {
  const existing = subscriptions.get(key);
  button.disabled = true;
  if (existing) {
    subscriptions.delete(key);
    (await existing.off)();
    button.textContent = 'Subscribe';
    button.setAttribute('aria-pressed', 'false');
    button.disabled = false;
    return;
  }
  let count = 0;
  const off = rt.subscribe(resource.uri, (update) => {
    // `resubscribed`: taken again after a reconnect or reload; not a change, but re-read.
    if (!update.resubscribed) {
      count += 1;
      badge.hidden = false;
      badge.textContent = `${plural(count, 'update')}, last ${new Date().toLocaleTimeString()}`;
    }
    onUpdate();
  }, {
    server: resource.server,
    // It ended by itself (the server refused it again, or is gone): back to Subscribe.
    onEnd: ({ error }) => {
      if (subscriptions.get(key)?.off !== off) return;
      subscriptions.delete(key);
      button.textContent = 'Subscribe';
      button.setAttribute('aria-pressed', 'false');
      badge.hidden = false;
      badge.textContent = `subscription ended: ${error.message}`;
    },
  });
  subscriptions.set(key, { off });
  try {
    await off;
    button.textContent = 'Unsubscribe';
    button.setAttribute('aria-pressed', 'true');
    badge.hidden = false;
    badge.textContent = 'subscribed';
    onUpdate();
  } catch (error) {
    subscriptions.delete(key);
    badge.hidden = false;
    badge.textContent = `subscribe failed: ${error.message}`;
  } finally {
    button.disabled = false;
  }
}

// The variable names of an RFC 6570 URI template, in order.
function templateVariables(template) {
  const names = [];
  for (const [, body] of template.matchAll(/\{([^}]*)\}/g)) {
    for (const spec of body.replace(/^[+#./;?&]/, '').split(',')) {
      const name = spec.replace(/(\*|:\d+)$/, '');
      if (name && !names.includes(name)) names.push(name);
    }
  }
  return names;
}

// RFC 6570 expansion of `template` with string values (levels 1-3; empty values left out).
function expandTemplate(template, values) {
  const kOperators = { '': ['', ',', false, encodeURIComponent], '+': ['', ',', false, encodeURI],
                       '#': ['#', ',', false, encodeURI], '.': ['.', '.', false, encodeURIComponent],
                       '/': ['/', '/', false, encodeURIComponent], ';': [';', ';', true, encodeURIComponent],
                       '?': ['?', '&', true, encodeURIComponent], '&': ['&', '&', true, encodeURIComponent] };
  return template.replace(/\{([^}]*)\}/g, (_, body) => {
    const operator = /^[+#./;?&]/.test(body) ? body[0] : '';
    const [first, separator, named, encode] = kOperators[operator];
    const parts = [];
    for (const spec of body.slice(operator.length).split(',')) {
      const name = spec.replace(/(\*|:\d+)$/, '');
      const value = values[name];
      if (value === undefined || value === '') continue;
      parts.push(named ? `${name}=${encode(value)}` : encode(value));
    }
    return parts.length ? first + parts.join(separator) : '';
  });
}

function templateNode(template) {
  const contents = el('div', { class: 'contents' });
  const status = el('p', { class: 'read-status muted' });
  const form = el('form', { class: 'variables', autocomplete: 'off' });
  const names = templateVariables(template.uriTemplate);
  const inputs = new Map();
  const valuesOf = () => Object.fromEntries([...inputs].map(([n, i]) => [n, i.value]));
  for (const name of names) {
    const input = el('input', { type: 'text', name, required: true });
    const list = completeInto(input, (value) => ({
      server: template.server, ref: { type: 'ref/resource', uri: template.uriTemplate }, argument: name, value,
      context: { arguments: Object.fromEntries(Object.entries(valuesOf()).filter(([n, v]) => n !== name && v !== '')) },
    }));
    inputs.set(name, input);
    form.append(el('label', { class: 'field' }, el('span', { text: name }), input, list));
  }
  const uriPreview = el('code', { class: 'uri expanded' });
  const button = el('button', { type: 'submit', text: 'Read' });
  form.append(el('div', { class: 'call-buttons' }, button, uriPreview));
  form.addEventListener('input', () => { uriPreview.textContent = expandTemplate(template.uriTemplate, valuesOf()); });
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    const uri = expandTemplate(template.uriTemplate, valuesOf());
    uriPreview.textContent = uri;
    button.disabled = true;
    await readInto(contents, status, uri, template.server);
    button.disabled = false;
  });
  return el('details', { class: 'template', 'data-server': template.server, 'data-uri-template': template.uriTemplate },
    entrySummary(template, template.uriTemplate, el('span', { class: 'badge template-badge', text: 'template' })),
    template.description ? el('p', { class: 'muted', text: template.description }) : null,
    form, status, contents);
}

// One message of a prompt: its role and its content block(s).
function renderMessage(message) {
  const m = message && typeof message === 'object' ? message : {};
  const role = typeof m.role === 'string' ? m.role : 'unknown';
  const box = el('div', { class: `message role-${role.replace(/[^a-z]/g, '')}` }, el('div', { class: 'role', text: role }));
  for (const block of Array.isArray(m.content) ? m.content : [m.content]) {
    const b = block && typeof block === 'object' ? block : {};
    if (b.type === 'text' && typeof b.text === 'string') {
      box.append(el('pre', { class: 'message-text', text: b.text }));
    } else if ((b.type === 'image' || b.type === 'audio') && typeof b.data === 'string') {
      box.append(renderContent({ uri: `(${b.type})`, mimeType: b.mimeType, blob: b.data }));
    } else if (b.type === 'resource' && b.resource && typeof b.resource === 'object') {
      box.append(renderContent(b.resource));
    } else if (b.type === 'resource_link' && typeof b.uri === 'string') {
      box.append(el('p', {}, 'Resource: ', el('code', { class: 'uri', text: b.uri })));
    } else {
      box.append(el('pre', { text: JSON.stringify(block, null, 2) }));
    }
  }
  return box;
}

function promptNode(prompt) {
  const id = `${prompt.server}:${prompt.name}`;
  const messages = el('div', { class: 'messages' });
  const status = el('p', { class: 'read-status muted' });
  const form = el('form', { class: 'prompt-args', autocomplete: 'off' });
  const inputs = new Map();
  const given = (except) => Object.fromEntries([...inputs].filter(([n, i]) => n !== except && i.value !== '')
    .map(([n, i]) => [n, i.value]));
  for (const argument of prompt.arguments) {
    const input = el('input', { type: 'text', name: argument.name, required: argument.required });
    const list = completeInto(input, (value) => ({
      server: prompt.server, ref: { type: 'ref/prompt', name: prompt.name }, argument: argument.name, value,
      context: { arguments: given(argument.name) },
    }));
    inputs.set(argument.name, input);
    form.append(el('label', { class: 'field' },
      el('span', { text: `${argument.title || argument.name}${argument.required ? ' *' : ''}` }), input, list,
      argument.description ? el('small', { class: 'muted', text: argument.description }) : null));
  }
  if (prompt.arguments.length === 0) form.append(el('p', { class: 'muted', text: 'No arguments.' }));
  const button = el('button', { type: 'submit', text: 'Get' });
  form.append(button);
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    button.disabled = true;
    status.textContent = 'getting…';
    status.className = 'read-status muted';
    try {
      const result = await rt.getPrompt(prompt.name, given(''), { server: prompt.server });
      const list = Array.isArray(result?.messages) ? result.messages : [];
      messages.replaceChildren(...list.map(renderMessage));
      status.textContent = typeof result?.description === 'string' ? result.description : plural(list.length, 'message');
    } catch (error) {
      messages.replaceChildren();
      status.textContent = `${error.name}: ${error.message}`;
      status.className = 'read-status error';
    } finally {
      button.disabled = false;
    }
  });
  return el('details', { class: 'prompt', 'data-prompt': id, 'data-server': prompt.server },
    el('summary', {}, el('code', { class: 'entry-name', text: id }),
       prompt.title ? el('span', { text: prompt.title }) : null,
       el('span', { class: 'badge cached', text: 'cached', hidden: !prompt.fromCache }),
       el('span', { class: 'description muted', text: prompt.description || '' })),
    form, status, messages);
}

// The box of `key`, made once; its "cached" badge follows the entry.
function catalogNode(key, entry, make) {
  let node = catalogNodes.get(key);
  if (!node) {
    node = make();
    catalogNodes.set(key, node);
  }
  node.querySelector(':scope > summary .badge.cached').hidden = !entry.fromCache;
  return node;
}

function renderCatalog() {
  const resources = rt.resources();
  const templates = rt.resourceTemplates();
  const prompts = rt.prompts();
  const live = new Set();
  const groups = new Map();  // server → its boxes
  const group = (server) => groups.get(server) ?? groups.set(server, []).get(server);
  for (const r of resources) {
    // (A resource that becomes subscribable once its server connects gets a new box.)
    const key = `resource ${r.server} ${r.uri} ${r.subscribable}`;
    live.add(key);
    group(r.server).push(catalogNode(key, r, () => resourceNode(r)));
  }
  for (const t of templates) {
    const key = `template ${t.server} ${t.uriTemplate}`;
    live.add(key);
    group(t.server).push(catalogNode(key, t, () => templateNode(t)));
  }
  const container = $('resources');
  container.replaceChildren(...[...groups].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([server, nodes]) => el('div', { class: 'catalog-server', 'data-server': server },
                                 el('h3', { class: 'server-name', text: server }), ...nodes)));
  if (groups.size === 0) container.append(el('p', { class: 'muted', text: state.loading ? 'Loading…' : 'No resources.' }));
  $('resource-count').textContent = `(${plural(resources.length, 'resource')}, ${plural(templates.length, 'template')})`;

  const promptBoxes = prompts.map((p) => {
    const key = `prompt ${p.server}:${p.name}`;
    live.add(key);
    return catalogNode(key, p, () => promptNode(p));
  });
  $('prompts').replaceChildren(...promptBoxes);
  if (prompts.length === 0) $('prompts').append(el('p', { class: 'muted', text: state.loading ? 'Loading…' : 'No prompts.' }));
  $('prompt-count').textContent = `(${prompts.length})`;
  for (const key of catalogNodes.keys()) if (!live.has(key)) catalogNodes.delete(key);
  renderTabCounts();
}

// Catalog events come in bursts (one per kind and server): one render per frame.
let catalogFrame = 0;
function scheduleCatalog() {
  if (catalogFrame) return;
  catalogFrame = requestAnimationFrame(() => {
    catalogFrame = 0;
    renderCatalog();
    renderServers();
  });
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
    renderCatalog();
  }
  await refreshAuth();
}

async function main() {
  [state.servers, rt] = await Promise.all([
    initialServers(),
    createRuntime({ logLevel: 'warn', sourceName: 'demo page', onElicit, toolSearch: savedToolSearch() }),
  ]);
  rt.onStatus((event) => {
    state.statuses.set(event.server, event);
    renderServers();
  });
  rt.onToolsChanged((tools) => {
    renderTools(tools);
    renderServers();
    renderTabCounts();
    renderSearch();
  });
  $('search-mode').value = savedToolSearch();
  $('search-mode').addEventListener('change', (event) => {
    localStorage.setItem(kToolSearchKey, event.target.value);
    rt.setToolSearch(event.target.value);
    renderSearch();
  });
  $('search-query').addEventListener('input', renderSearch);
  $('reset-loaded').addEventListener('click', () => {
    rt.resetLoadedTools();
    renderSearch();
  });
  rt.onCatalogChanged(scheduleCatalog);
  for (const button of document.querySelectorAll('#tabs [role="tab"]')) {
    button.addEventListener('click', () => selectTab(button.dataset.tab));
  }
  rt.onMessage(logMessage);
  $('log-limit').textContent = String(kLogLimit);
  $('log-server').addEventListener('change', filterLog);
  $('log-clear').addEventListener('click', () => $('protocol-log').replaceChildren());
  $('raw-json').addEventListener('change', (event) => document.body.classList.toggle('raw-json', event.target.checked));
  $('add-server').addEventListener('submit', onAddServer);
  window.addEventListener('pagehide', () => rt.dispose());
  renderServers();
  renderTools([]);
  renderCatalog();
  renderSearch();
  await load();
}

main().catch((error) => {
  $('load-errors').textContent = `The runtime did not start: ${error.message}`;
  $('load-errors').hidden = false;
});
