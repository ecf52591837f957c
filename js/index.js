// mcprt — the ES module browser and Node agents import. A thin, typed wrapper (see
// index.d.ts) over the WebAssembly module (mcprt.mjs + mcprt.wasm next to this file):
// memoized module init, Promise methods over an id → resolver table, AbortSignal,
// explicit dispose(). Every MCP rule lives in the C++ core.
//
//   import { createRuntime } from 'mcprt';
//   const rt = await createRuntime();
//   await rt.discoverAndLoad({ servers: { demo: { url: 'https://example.com/mcp' } } });
//   const result = await rt.callTool('mcp_demo_echo', { message: 'hi' }, { signal });
//
// OAuth (SPEC §13): a server that wants a sign-in shows phase 'needs-auth';
// `await rt.auth.login(name)` (from a click: the default opens a popup) signs in and
// reconnects it. `createRuntime({onAuthorize})` replaces the popup with the host's own
// user step: (url, {serverName, redirectUri, signal}) => Promise<the redirect URL>.
//
// Input from the user or the host's model (SPEC §15): `createRuntime({onElicit, onSample,
// roots})`. A server's elicitation (form or URL mode) goes to onElicit(request) →
// {action, content?}; its sampling request to onSample({server, params}) → a
// CreateMessageResult. A capability is offered to servers only when its handler is given;
// `roots` (a list of file:// roots) is not offered by default.
//
// Resources, prompts and completions (SPEC §15): `rt.resources()`, `rt.resourceTemplates()`,
// `rt.prompts()` (every server's catalog, kept fresh; `onCatalogChanged`),
// `rt.readResource(uri)`, `rt.subscribe(uri, callback)`, `rt.getPrompt(name, args)`,
// `rt.complete({server, ref, argument, value})`.
//
// Many tools (SPEC §16): `createRuntime({toolSearch: 'auto' | 'on' | 'off'})` (default
// 'auto': on above 30 tools). While it is active the model is given `rt.visibleTools()`:
// the loaded tools and the meta-tool `mcp_tool_search`, whose calls (`rt.callTool`) load
// what they find; `rt.catalog()`, `rt.searchTools(q)`, `rt.loadTools(names)`,
// `rt.loadedTools()`, `rt.resetLoadedTools()`. `rt.tools()` stays every tool. The index,
// its ranking and the loaded set are the C++ core's (the same as native hosts').
//
// Loading (SPEC §18): mcprt.mjs is imported statically, so bundlers follow it; the .wasm is
// `createRuntime({wasmUrl})` or mcprt.wasm next to this file. In Node the runtime is quiet
// unless asked (`logLevel`, or `log: (level, message) => …`), and without IndexedDB the
// tool cache is off.

import createMcprtModule from './mcprt.mjs';

const modules = new Map();  // wasm URL → Promise of the instantiated module

const isNode = typeof process === 'object' && typeof process?.versions?.node === 'string';

// Where mcprt.wasm is: createRuntime({wasmUrl}), else the file next to this one. The
// default is written as `new URL('./mcprt.wasm', import.meta.url)`, the pattern bundlers
// (vite, rollup, webpack, parcel) turn into an emitted asset; esbuild leaves it as is
// (copy mcprt.wasm next to the bundle, or import its URL and pass it: js/README.md).
function wasmUrlOf(options) {
  if (options.wasmUrl !== undefined && options.wasmUrl !== null) return String(options.wasmUrl);
  try {
    return new URL('./mcprt.wasm', import.meta.url).href;
  } catch {
    throw new TypeError('mcprt cannot tell where mcprt.wasm is (import.meta.url is not a URL in this ' +
                        'bundle): pass createRuntime({wasmUrl})');
  }
}

// Loads (once per wasm URL) and instantiates the wasm module.
function loadModule(options) {
  const wasmUrl = wasmUrlOf(options);
  let pending = modules.get(wasmUrl);
  if (!pending) {
    // The module asks locateFile for its .wasm (in Node, platform-web/js/node-wasm-prejs.js
    // reads a file path or file: URL from disk; an http(s) URL is fetched).
    const locateFile = (file) => (file.endsWith('.wasm') ? wasmUrl : file);
    // In Node, Emscripten's own messages (a failed load's "wasm streaming compile failed",
    // "Aborted(…)") stay off stderr: the rejection below carries them.
    const quiet = isNode ? { print: () => {}, printErr: () => {} } : {};
    pending = Promise.resolve()
      .then(() => createMcprtModule({ locateFile, ...quiet, ...options.moduleArgs }))
      .catch((error) => {
        throw new Error(`mcprt could not load its WebAssembly module from ${wasmUrl}: ${describeError(error)}`,
                        { cause: error });
      })
      .then((module) => {
        module.mcprtRuntimeEvent = (runtimeId, kind, callId, payload) => {
          // Outside the wasm call stack: a listener may call back into the runtime.
          queueMicrotask(() => runtimes.get(runtimeId)?.[dispatch](kind, callId, payload));
        };
        // The user step of an OAuth sign-in (platform-web's WebAuthorizer): `handler` is the
        // runtime's id.
        module.mcprtAuthorize = (request) => {
          const runtime = runtimes.get(request.handler);
          if (!runtime) return Promise.reject(new Error('the runtime was disposed'));
          return runtime[authorize](request);
        };
        // A runtime's log lines (platform-web's WebConsoleLogger, already filtered by level).
        module.mcprtLog = (runtimeId, level, message) => runtimes.get(runtimeId)?.[log](level, message);
        // The protocol tap (onMessage): asked first whether anyone listens (the module dumps
        // a message only then), delivered in order with the events above.
        module.mcprtRuntimeListens = (runtimeId) => runtimes.get(runtimeId)?.[listens]() === true;
        module.mcprtRuntimeMessage = (runtimeId, server, sent, message) => {
          queueMicrotask(() => runtimes.get(runtimeId)?.[tapped](server, sent, message));
        };
        return module;
      });
    pending.catch(() => modules.delete(wasmUrl));  // a failed load may be retried
    modules.set(wasmUrl, pending);
  }
  return pending;
}

const runtimes = new Map();  // runtime id → Runtime (the C++ side names runtimes by id)
const dispatch = Symbol('mcprt.dispatch');  // the C++ → JS entry point, kept off the API
const authorize = Symbol('mcprt.authorize');  // the sign-in's user step, from C++
const log = Symbol('mcprt.log');  // a log line, from C++
const listens = Symbol('mcprt.listens');  // whether onMessage has a listener, from C++
const tapped = Symbol('mcprt.tapped');  // a protocol message, from C++
const kLogLevels = ['debug', 'info', 'warn', 'error'];  // WebConsoleLogger's level numbers
let nextRuntimeId = 1;
let nextPopup = 1;

// The redirect page of the default sign-in: oauth-callback.html next to this file.
function defaultRedirectUri() {
  try {
    return new URL('./oauth-callback.html', import.meta.url).href;
  } catch {
    return '';
  }
}

const hasWindow = () => typeof window === 'object' && window !== null && typeof window.open === 'function';
const kPopupFeatures = 'popup=yes,width=520,height=720';
const kRedirectMessage = 'mcprt-oauth-redirect';

// A popup opened while the page still has the user's click (browsers block window.open
// later), shown until the authorization URL is known.
function openBlankPopup(serverName) {
  if (!hasWindow()) return null;
  const popup = window.open('', `mcprt-sign-in-${nextPopup++}`, kPopupFeatures);
  if (!popup) return null;
  try {
    popup.document.title = `Sign in to ${serverName}`;
    popup.document.body.textContent = `Connecting to ${serverName}…`;
  } catch {
    // Not ours to write (an unusual browser setting): the page stays blank until it loads.
  }
  return popup;
}

// The default user step: the authorization URL in a popup whose redirect lands on
// oauth-callback.html, which posts it back. Accepted only from this page's own origin,
// for the redirect URI's page, with the `state` this authorization request carried.
function popupAuthorize({ url, serverName, redirectUri, signal }, preopened) {
  if (!hasWindow()) {
    throw new Error('there is no browser window to open a sign-in popup in: pass onAuthorize to createRuntime');
  }
  const callback = new URL(redirectUri);
  if (callback.origin !== window.location.origin) {
    throw new Error(`the redirect URI's origin ${callback.origin} is not this page's (${window.location.origin}), ` +
                    'so the sign-in popup could not report back: serve oauth-callback.html from this origin and ' +
                    'pass its URL as createRuntime({redirectUri})');
  }
  const state = new URL(url).searchParams.get('state');
  return new Promise((resolve, reject) => {
    let popup = preopened && !preopened.closed ? preopened : null;
    if (popup) popup.location.href = url;
    else popup = window.open(url, `mcprt-sign-in-${nextPopup++}`, kPopupFeatures);
    if (!popup) {
      reject(new Error(`the browser blocked the sign-in popup for ${serverName}: call auth.login() from a click ` +
                       'handler, or pass onAuthorize to createRuntime'));
      return;
    }
    const channel = typeof BroadcastChannel === 'function' ? new BroadcastChannel('mcprt-oauth') : null;
    let closedPoll = 0;
    const finish = (settle) => {
      window.removeEventListener('message', onMessage);
      signal?.removeEventListener('abort', onAbort);
      channel?.close();
      clearInterval(closedPoll);
      try {
        popup.close();
      } catch {
        // already gone
      }
      settle();
    };
    const accept = (data) => {
      if (!data || data.type !== kRedirectMessage || typeof data.url !== 'string') return;
      let redirect;
      try {
        redirect = new URL(data.url);
      } catch {
        return;
      }
      if (redirect.origin !== callback.origin || redirect.pathname !== callback.pathname) return;
      if (redirect.searchParams.get('state') !== state) return;  // another sign-in's redirect
      finish(() => resolve(data.url));
    };
    const onMessage = (event) => {
      if (event.origin !== window.location.origin) return;
      accept(event.data);
    };
    const onAbort = () => finish(() => reject(new DOMException(`the sign-in to ${serverName} was cancelled`, 'AbortError')));
    window.addEventListener('message', onMessage);
    if (channel) channel.onmessage = (event) => accept(event.data);
    signal?.addEventListener('abort', onAbort, { once: true });
    closedPoll = setInterval(() => {
      if (popup.closed) finish(() => reject(new Error(`the sign-in window for ${serverName} was closed before the sign-in finished`)));
    }, 300);
  });
}

// `roots` for the C++ side: file:// URIs to the paths the core answers roots/list with
// (it names each root by its last path segment). Throws a TypeError naming what is wrong.
function rootPaths(roots) {
  if (!Array.isArray(roots)) {
    throw new TypeError('roots must be false or an array of {uri: "file:///..."}');
  }
  return roots.map((root, i) => {
    const uri = typeof root === 'string' ? root : root?.uri;
    let url;
    try {
      url = new URL(String(uri));
    } catch {
      url = null;
    }
    if (!url || url.protocol !== 'file:' || (url.host !== '' && url.host !== 'localhost')) {
      throw new TypeError(`roots[${i}]: the uri must be a file:///... URI (got ${JSON.stringify(uri)})`);
    }
    let path;
    try {
      path = decodeURIComponent(url.pathname);
    } catch {
      throw new TypeError(`roots[${i}]: the uri ${JSON.stringify(uri)} has a malformed %-escape`);
    }
    if (path.includes('\0')) throw new TypeError(`roots[${i}]: the uri ${JSON.stringify(uri)} has a NUL byte`);
    return path;
  });
}

const kActions = new Set(['accept', 'decline', 'cancel']);

function describeError(error) {
  if (error instanceof Error) return error.message || error.name;
  return String(error);
}

const isObject = (value) => value !== null && typeof value === 'object' && !Array.isArray(value);

// CatalogKind's numbers in the C++ core → the names the API uses.
const kCatalogKinds = ['resources', 'resourceTemplates', 'prompts'];
const kCatalogKeys = ['uri', 'uriTemplate', 'name'];

// One catalog entry as the API shows it: the members MCP defines, each only when the
// server gave it with the right type (the definition is the server's, untrusted).
function catalogEntry(kind, { server, fromCache, subscribable, definition }) {
  const d = isObject(definition) ? definition : {};
  const entry = { server };
  const key = kCatalogKeys[kind];
  entry[key] = String(d[key]);  // the core keeps only entries whose key is a string
  entry.name = typeof d.name === 'string' ? d.name : entry[key];
  for (const member of kind === 2 ? ['title', 'description'] : ['title', 'description', 'mimeType']) {
    if (typeof d[member] === 'string') entry[member] = d[member];
  }
  if (kind === 0 && typeof d.size === 'number') entry.size = d.size;
  if (kind !== 2 && isObject(d.annotations)) entry.annotations = d.annotations;
  if (kind === 2) {
    entry.arguments = (Array.isArray(d.arguments) ? d.arguments : [])
      .filter((a) => isObject(a) && typeof a.name === 'string')
      .map((a) => {
        const argument = { name: a.name };
        if (typeof a.title === 'string') argument.title = a.title;
        if (typeof a.description === 'string') argument.description = a.description;
        argument.required = a.required === true;
        return argument;
      });
  }
  if (kind === 0) entry.subscribable = subscribable === true;
  entry.fromCache = fromCache === true;
  return entry;
}

const kToolSearchModes = new Set(['auto', 'on', 'off']);

// createRuntime's `toolSearch` for the C++ side: {mode, threshold?, tokenBudget?}. Throws a
// TypeError naming what is wrong.
function toolSearchOptions(value) {
  if (value === undefined || value === null) return { mode: 'auto' };
  if (value === true || value === false) return { mode: value ? 'on' : 'off' };
  const options = typeof value === 'string' ? { mode: value } : value;
  if (!isObject(options) || !kToolSearchModes.has(options.mode ?? 'auto')) {
    throw new TypeError("toolSearch must be 'auto', 'on', 'off' or {mode, threshold, tokenBudget}");
  }
  const out = { mode: options.mode ?? 'auto' };
  for (const key of ['threshold', 'tokenBudget']) {
    if (options[key] === undefined) continue;
    if (!Number.isSafeInteger(options[key]) || options[key] < 0) {
      throw new TypeError(`toolSearch.${key} must be a non-negative integer`);
    }
    out[key] = options[key];
  }
  return out;
}

// The runtime's own tool (mcp_tool_search) in visibleTools() has the fields of an MCP
// tool's ToolInfo too.
function ownTool(tool) {
  if (typeof tool.server === 'string') return tool;
  return { ...tool, server: '', tool: tool.name, label: tool.name, deferred: false, path: '',
           annotations: { readOnlyHint: true, openWorldHint: false }, annotationsTrusted: true };
}

// An Error carrying the core's error code (and data) from the C++ side.
export class McprtError extends Error {
  constructor(detail) {
    super(detail?.message ?? 'mcprt error');
    this.name = 'McprtError';
    this.code = detail?.code ?? 'internal';
    if (detail?.wireCode !== undefined) this.wireCode = detail.wireCode;
    if (detail?.data !== undefined) this.data = detail.data;
  }
}

// One listener's exception must not starve the others; it is reported, not swallowed.
function notify(listener, value) {
  try {
    listener(value);
  } catch (error) {
    console.error('[mcprt] a listener threw:', error);
  }
}

function abortError(signal) {
  const reason = signal?.reason;
  if (reason instanceof Error && reason.name === 'AbortError') return reason;
  const message = typeof reason === 'string' ? reason : 'The operation was aborted';
  return new DOMException(message, 'AbortError');
}

class Runtime {
  #module;
  #native;
  #id;
  #pending = new Map();  // call id → { resolve, reject, onProgress }
  #nextCall = 1;
  #toolsListeners = new Set();
  #statusListeners = new Set();
  #messageListeners = new Set();
  #catalogListeners = new Set();
  // Resource subscriptions (subscribe()), each a record {uri, callback, server (the option
  // given, '' for none), on (the server it is on), id (the core's, 0 while asked), callId
  // (its latest subscribe call; 0 while a load replaces the manager), firstCallId, ended}.
  // A load sends every one to the new manager again (#restoreSubscriptions).
  #subscriptions = new Set();
  #subscriptionCalls = new Map();  // subscribe call id → its record (the core's updates name the call)
  #loads = 0;  // discoverAndLoad / reload calls so far (the latest one restores the subscriptions)
  #loaded = false;  // a discoverAndLoad succeeded: there is a manager to add servers to
  #loading = null;  // the discoverAndLoad / reload in flight (settles, never rejects)
  #changes = Promise.resolve();  // addServer / removeServer, one after another
  #managerCalls = new Set();  // ids of calls the manager answers (a new load drops it unanswered)
  #disposed = false;
  #onAuthorize = null;
  #onElicit = null;
  #onSample = null;
  #logSink = null;
  #popups = new Map();  // server name → the popup its auth.login() opened on the click
  #auth;

  constructor(module, options) {
    this.#module = module;
    this.#id = nextRuntimeId++;
    const { wasmUrl, moduleArgs, log: logSink, onAuthorize, onElicit, onSample, onMessage, roots, trustedServers,
            toolSearch, ...nativeOptions } = options;
    nativeOptions.toolSearch = toolSearchOptions(toolSearch);
    if (logSink !== undefined && logSink !== null && typeof logSink !== 'function') {
      throw new TypeError("log must be a function (level: 'debug'|'info'|'warn'|'error', message: string) => void");
    }
    this.#logSink = logSink ?? null;
    // Quiet by default in Node (a library does not write to its host's stderr unless asked
    // to: logLevel or log), the console's warnings in a browser.
    nativeOptions.logLevel ??= isNode && !this.#logSink ? 'silent' : 'warn';
    // No IndexedDB (Node without fake-indexeddb): the tool cache is off rather than
    // failing, and warning, on every read and write.
    if (nativeOptions.cache === undefined && typeof globalThis.indexedDB === 'undefined') nativeOptions.cache = false;
    if (onAuthorize !== undefined && onAuthorize !== null && typeof onAuthorize !== 'function') {
      throw new TypeError('onAuthorize must be a function (url, {serverName, redirectUri, signal}) => Promise<string>');
    }
    if (onElicit !== undefined && onElicit !== null && typeof onElicit !== 'function') {
      throw new TypeError('onElicit must be a function ({server, mode, message, requestedSchema?, url?}) => Promise<{action, content?}>');
    }
    if (onSample !== undefined && onSample !== null && typeof onSample !== 'function') {
      throw new TypeError('onSample must be a function ({server, params}) => Promise<CreateMessageResult>');
    }
    this.#onAuthorize = onAuthorize ?? null;
    this.#onElicit = onElicit ?? null;
    this.#onSample = onSample ?? null;
    nativeOptions.elicit = this.#onElicit !== null;
    nativeOptions.sample = this.#onSample !== null;
    if (roots !== undefined && roots !== null && roots !== false) nativeOptions.rootPaths = rootPaths(roots);
    if (nativeOptions.protocol !== undefined) nativeOptions.protocol = String(nativeOptions.protocol);
    if (trustedServers !== undefined && trustedServers !== null) {
      if (!Array.isArray(trustedServers)) throw new TypeError('trustedServers must be an array of server names');
      nativeOptions.trustedServers = trustedServers.map(String);
    }
    nativeOptions.redirectUri = String(nativeOptions.redirectUri ?? defaultRedirectUri());
    // A host with its own user step may run it whenever a server asks; the popup only
    // from auth.login() (a popup without the user's click is blocked).
    nativeOptions.interactiveAuth ??= this.#onAuthorize !== null;
    nativeOptions.applicationType ??= hasWindow() ? 'web' : 'native';
    if (onMessage !== undefined && onMessage !== null && typeof onMessage !== 'function') {
      throw new TypeError("onMessage must be a function ({server, direction: 'send'|'receive', message}) => void");
    }
    this.#native = new module.WebRuntime(this.#id, JSON.stringify(nativeOptions));
    runtimes.set(this.#id, this);
    if (onMessage) this.onMessage(onMessage);
    this.#auth = Object.freeze({
      login: (name) => this.#authLogin(String(name)),
      logout: (name) => this.#start((callId) => this.#native.authLogout(callId, String(name))),
      status: (name) => this.#start((callId) => this.#native.authStatus(callId, name === undefined ? '' : String(name)))
        .then((value) => value ?? undefined),
    });
  }

  // OAuth sign-ins: login(name), logout(name), status(name?) (see index.d.ts).
  get auth() {
    return this.#auth;
  }

  // Connects to `servers` (an object of server configs, `{name: {url, ...}}`, or
  // `{mcpServers: {...}}`) through discovery, the manager and the startup gate. Replaces
  // any earlier configuration.
  discoverAndLoad({ servers } = {}) {
    // Refused here, not by the module: a refused configuration leaves the manager (and the
    // calls and subscriptions in it) as it is, and #load is for loads that replace it.
    let text;
    try {
      text = JSON.stringify(servers ?? {});
    } catch (error) {
      return Promise.reject(new TypeError(`discoverAndLoad: \`servers\` is not JSON (${describeError(error)})`));
    }
    if (typeof text !== 'string' || !text.startsWith('{')) {
      return Promise.reject(new McprtError({
        code: 'invalid_argument',
        message: 'discoverAndLoad: `servers` must be an object of server configs (the mcpServers shape)',
      }));
    }
    const loaded = this.#load((callId) => this.#native.discoverAndLoad(callId, text));
    loaded.then(() => { this.#loaded = true; }, () => {});
    return loaded;
  }

  // Disconnects everything, discovers the same servers again and reconnects.
  reload() {
    return this.#load((callId) => this.#native.reload(callId));
  }

  // Adds one server and connects it alone: every other connection stays as it is. The
  // same config again reconnects it only if it is down; a changed one replaces its
  // connection; an invalid one is refused (the server keeps what it had). Resolves at its
  // startup gate with its tools and errors.
  addServer(name, config) {
    if (typeof name !== 'string' || name === '') return Promise.reject(new TypeError('addServer: name must be a non-empty string'));
    if (!config || typeof config !== 'object' || Array.isArray(config)) {
      return Promise.reject(new TypeError(`addServer ${name}: config must be a server config object ({url, headers, ...})`));
    }
    let text;
    try {
      text = JSON.stringify(config);
    } catch (error) {
      return Promise.reject(new TypeError(`addServer ${name}: config is not JSON (${describeError(error)})`));
    }
    return this.#change(async () => {
      // Nothing loaded yet: an empty configuration to add to.
      if (!this.#loaded) await this.discoverAndLoad({ servers: {} });
      await this.#managerCall((callId) => this.#native.addServer(callId, name, text));
      // Its state now tells how its startup gate went.
      const state = this.status(name);
      const phase = state?.phase;
      return {
        tools: this.tools().filter((t) => t.server === name),
        errors: state?.error ? [{ path: state.source.path, error: state.error.message, server: name }] : [],
        connectedServers: phase === 'connected' ? [name] : [],
        needsAuthServers: phase === 'needs-auth' ? [name] : [],
      };
    });
  }

  // Disconnects one server and forgets it (a reload does not bring it back); the others
  // stay connected.
  removeServer(name) {
    name = String(name);
    return this.#change(async () => {
      await this.#managerCall((callId) => this.#native.removeServer(callId, name));
      // Its subscriptions end with it (the server and its config are gone).
      for (const record of [...this.#subscriptions]) {
        if ((record.server || record.on) !== name || this.#firstSubscribePending(record)) continue;
        this.#endSubscription(record, { code: 'closed',
                                        message: `${name}: the subscription to ${record.uri} ended: removeServer removed the server` });
      }
    });
  }

  // Every MCP tool, sorted by name, whatever tool search defers (visibleTools() is what
  // the model is given).
  tools() {
    if (this.#disposed) return [];
    return JSON.parse(this.#native.toolsJson());
  }

  // status(name) → that server's state (phase 'disconnected' after disconnectServer), or
  // undefined when unknown or removed; status() → every server's.
  status(name) {
    if (this.#disposed) return name === undefined ? [] : undefined;
    const value = JSON.parse(this.#native.statusJson(name ?? ''));
    return value === null ? undefined : value;
  }

  // --- tool search (SPEC §16) ---

  // Whether the model's tools are deferred behind mcp_tool_search now (mode 'on', or 'auto'
  // above the threshold or token budget).
  toolSearchActive() {
    return !this.#disposed && this.#native.toolSearchActive();
  }

  // Other tool search options ('auto' | 'on' | 'off' | {mode, threshold, tokenBudget}),
  // applied at once (the loaded set stays); onToolsChanged follows.
  setToolSearch(options) {
    const native = JSON.stringify(toolSearchOptions(options));
    if (!this.#disposed) this.#native.setToolSearch(native);
  }

  // Every MCP tool, sorted by name: {name, server, summary, loaded}.
  catalog() {
    return this.#disposed ? [] : JSON.parse(this.#native.toolCatalogJson());
  }

  // The deferred tools as "name: summary" lines, for the host's system prompt.
  catalogText() {
    return this.#disposed ? '' : this.#native.catalogText();
  }

  // The search mcp_tool_search runs, without loading: keywords, or "select:a,b" for exact
  // names. Best first: [{name, server, match, score, summary}].
  searchTools(query, { limit = 0 } = {}) {
    if (!Number.isSafeInteger(limit) || limit < 0) throw new TypeError('searchTools: limit must be a non-negative integer');
    return this.#disposed ? [] : JSON.parse(this.#native.searchToolsJson(String(query), Math.min(limit, 1000)));
  }

  // Adds tools (their mcp_ names) to the loaded set; returns the names that are no MCP tool.
  loadTools(names) {
    if (!Array.isArray(names)) throw new TypeError('loadTools: names must be an array of tool names');
    return this.#disposed ? names.map(String) : JSON.parse(this.#native.loadToolsJson(JSON.stringify(names.map(String))));
  }

  // The loaded set (what searches, loadTools and calls loaded), sorted.
  loadedTools() {
    return this.#disposed ? [] : JSON.parse(this.#native.loadedToolsJson());
  }

  // Empties the loaded set (a new conversation).
  resetLoadedTools() {
    if (!this.#disposed) this.#native.resetLoadedTools();
  }

  // The tools to give the model, sorted by name: every tool while search is inactive;
  // otherwise the loaded and always-loaded ones and mcp_tool_search.
  visibleTools() {
    return this.#disposed ? [] : JSON.parse(this.#native.visibleToolsJson()).map(ownTool);
  }

  callTool(name, args = {}, { signal, onProgress } = {}) {
    if (signal?.aborted) return Promise.reject(abortError(signal));
    let callId = 0;
    const promise = this.#start((id) => {
      callId = id;
      this.#native.callTool(id, String(name), JSON.stringify(args ?? {}), typeof onProgress === 'function');
    }, onProgress);
    return this.#abortable(promise, callId, signal);
  }

  // Every server's resources, sorted by server and URI (see index.d.ts for the shape).
  resources() {
    return this.#catalog(0);
  }

  resourceTemplates() {
    return this.#catalog(1);
  }

  prompts() {
    return this.#catalog(2);
  }

  // resources/read → the raw result ({contents}); without `server`, the server that lists
  // the URI (or a template that matches it).
  readResource(uri, { server, signal } = {}) {
    return this.#serverRequest('read', server, { uri: String(uri) }, signal);
  }

  // Calls `callback({server, uri, title?})` on every notifications/resources/updated of
  // `uri`; resolves with the function that ends the subscription once the server took it.
  // The subscription lives until that function is called: across reconnects (the core
  // subscribes again) and across discoverAndLoad / reload (#restoreSubscriptions sends it
  // to the new manager). Once it was taken again, `callback({server, uri, resubscribed:
  // true})` runs: a change in between was never notified. It ends by itself, with a
  // warning and `onEnd({server, uri, error})`, when the server refuses it again after a
  // reconnect, when a load's configuration cannot take it, or when removeServer removes
  // its server. A subscribe() still waiting for its server when a load starts rejects
  // ('aborted'), like every call of the manager the load replaces.
  subscribe(uri, callback, { server, onEnd } = {}) {
    if (typeof callback !== 'function') {
      return Promise.reject(new TypeError('subscribe: callback must be a function ({server, uri, title?, resubscribed?}) => void'));
    }
    if (onEnd !== undefined && onEnd !== null && typeof onEnd !== 'function') {
      return Promise.reject(new TypeError('subscribe: onEnd must be a function ({server, uri, error}) => void'));
    }
    const record = { uri: String(uri), callback, onEnd: onEnd ?? null,
                     server: server === undefined || server === null ? '' : String(server),
                     on: '', id: 0, callId: 0, firstCallId: 0, ended: false };
    this.#subscriptions.add(record);
    const sent = this.#sendSubscription(record, record.server);
    record.firstCallId = record.callId;
    return sent.then(() => () => this.#endSubscription(record), (error) => {
      this.#endSubscription(record);
      throw error;
    });
  }

  // prompts/get → the raw result ({description?, messages}). `name` is "server:name", or a
  // bare name that exactly one server offers; `server` names the server outright.
  getPrompt(name, args = {}, { server, signal } = {}) {
    let target;
    try {
      target = server === undefined || server === null ? this.#promptTarget(String(name)) : { server: String(server), name: String(name) };
    } catch (error) {
      return Promise.reject(error);
    }
    return this.#serverRequest('prompt', target.server, { name: target.name, arguments: args ?? {} }, signal);
  }

  // completion/complete → {values, total?, hasMore?}. `ref` is {type: 'ref/prompt', name}
  // or {type: 'ref/resource', uri} (a template); `context` is {arguments: {...}} with the
  // values already given. Without `server`: the one with that prompt or template.
  complete({ server, ref, argument, value = '', context, signal } = {}) {
    let target = server === undefined || server === null ? '' : String(server);
    try {
      if (!isObject(ref) || (ref.type !== 'ref/prompt' && ref.type !== 'ref/resource')) {
        throw new TypeError("complete: ref must be {type: 'ref/prompt', name} or {type: 'ref/resource', uri}");
      }
      if (typeof argument !== 'string' || argument === '') {
        throw new TypeError('complete: argument must be the name of the argument (or template variable) being filled');
      }
      if (!target && ref.type === 'ref/prompt') {
        const prompt = this.#promptTarget(String(ref.name));
        target = prompt.server;
        ref = { ...ref, name: prompt.name };
      } else if (!target) {
        target = this.#templateServer(String(ref.uri));
      }
    } catch (error) {
      return Promise.reject(error);
    }
    const given = isObject(context) && isObject(context.arguments) ? context.arguments : null;
    return this.#serverRequest('complete', target, { ref, argument, value: String(value), context: given }, signal)
      .then((result) => {
        const completion = isObject(result?.completion) ? result.completion : {};
        const out = { values: (Array.isArray(completion.values) ? completion.values : []).filter((v) => typeof v === 'string') };
        if (typeof completion.total === 'number') out.total = completion.total;
        if (typeof completion.hasMore === 'boolean') out.hasMore = completion.hasMore;
        return out;
      });
  }

  disconnectServer(name) {
    return this.#managerCall((callId) => this.#native.disconnectServer(callId, String(name)));
  }

  disconnectAll() {
    return this.#managerCall((callId) => this.#native.disconnectAll(callId));
  }

  // Called after any change of tools(); returns the function that unsubscribes.
  onToolsChanged(callback) {
    this.#toolsListeners.add(callback);
    return () => this.#toolsListeners.delete(callback);
  }

  // Called with {server, kind: 'resources' | 'resourceTemplates' | 'prompts'} after a
  // server's catalog changed (server null: a load replaced every server's); returns the
  // function that unsubscribes.
  onCatalogChanged(callback) {
    this.#catalogListeners.add(callback);
    return () => this.#catalogListeners.delete(callback);
  }

  // Called with {server, phase, toolCount, source, error} as servers connect, fail,
  // reconnect and disconnect; returns the function that unsubscribes.
  onStatus(callback) {
    this.#statusListeners.add(callback);
    return () => this.#statusListeners.delete(callback);
  }

  // Called with {server, direction: 'send'|'receive', message} for every JSON-RPC message
  // of every server (a protocol log); returns the function that unsubscribes. Messages are
  // only copied out of the module while a listener is installed.
  onMessage(callback) {
    this.#messageListeners.add(callback);
    return () => this.#messageListeners.delete(callback);
  }

  // Closes every connection and frees the module's objects. Pending promises reject.
  dispose() {
    if (this.#disposed) return;
    this.#disposed = true;
    this.#native.dispose();
    this.#native.delete();
    runtimes.delete(this.#id);
    const pending = [...this.#pending.values()];
    this.#pending.clear();
    for (const entry of pending) entry.reject(new McprtError({ code: 'aborted', message: 'the runtime was disposed' }));
    this.#toolsListeners.clear();
    this.#statusListeners.clear();
    this.#messageListeners.clear();
    this.#catalogListeners.clear();
    for (const record of this.#subscriptions) record.ended = true;
    this.#subscriptions.clear();
    this.#subscriptionCalls.clear();
    for (const popup of this.#popups.values()) popup.close();
    this.#popups.clear();
  }

  get disposed() {
    return this.#disposed;
  }

  #catalog(kind) {
    if (this.#disposed) return [];
    return JSON.parse(this.#native.catalogJson(kind)).map((entry) => catalogEntry(kind, entry));
  }

  // The server and name of prompt `name`: "server:name" of a server the runtime knows, else
  // the one server that lists a prompt of that name.
  #promptTarget(name) {
    const prompts = this.prompts();
    const colon = name.indexOf(':');
    if (colon > 0) {
      const server = name.slice(0, colon);
      const bare = name.slice(colon + 1);
      if (prompts.some((p) => p.server === server && p.name === bare) ||
          (this.status(server) !== undefined && !prompts.some((p) => p.name === name))) {
        return { server, name: bare };
      }
    }
    const servers = prompts.filter((p) => p.name === name).map((p) => p.server);
    if (servers.length === 1) return { server: servers[0], name };
    const message = servers.length === 0
      ? `no server offers a prompt named "${name}"`
      : `more than one server offers a prompt named "${name}": ${servers.map((s) => `${s}:${name}`).join(', ')} ` +
        '(name one as server:name or with {server})';
    throw new McprtError({ code: 'invalid_argument', message });
  }

  // The one server with resource template `uriTemplate`.
  #templateServer(uriTemplate) {
    const servers = this.resourceTemplates().filter((t) => t.uriTemplate === uriTemplate).map((t) => t.server);
    if (servers.length === 1) return servers[0];
    const message = servers.length === 0
      ? `no server offers the resource template "${uriTemplate}"`
      : `more than one server offers the resource template "${uriTemplate}": ${servers.join(', ')} (pass {server})`;
    throw new McprtError({ code: 'invalid_argument', message });
  }

  #serverRequest(method, server, params, signal) {
    if (signal?.aborted) return Promise.reject(abortError(signal));
    let text;
    try {
      text = JSON.stringify(params);
    } catch (error) {
      return Promise.reject(new TypeError(`${method}: the arguments are not JSON (${describeError(error)})`));
    }
    let callId = 0;
    const promise = this.#managerCall((id) => {
      callId = id;
      this.#native.serverRequest(id, method, server === undefined || server === null ? '' : String(server), text);
    });
    return this.#abortable(promise, callId, signal);
  }

  // Aborting `signal` rejects the call with an AbortError, and the core cancels the request
  // (notifications/cancelled to the server).
  #abortable(promise, callId, signal) {
    if (!signal || !callId) return promise;
    const onAbort = () => {
      const entry = this.#pending.get(callId);
      if (!entry) return;
      this.#pending.delete(callId);
      entry.reject(abortError(signal));
      if (!this.#disposed) this.#native.abortCall(callId, typeof signal.reason === 'string' ? signal.reason : '');
    };
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(() => signal.removeEventListener('abort', onAbort),
                 () => signal.removeEventListener('abort', onAbort));
    return promise;
  }

  #authLogin(name) {
    // The default user step needs its popup now, while the click that called us counts.
    const popup = this.#onAuthorize || this.#disposed ? null : openBlankPopup(name);
    if (popup) this.#popups.set(name, popup);
    const done = () => {
      if (this.#popups.get(name) === popup) this.#popups.delete(name);
      if (popup && !popup.closed) popup.close();
    };
    const promise = this.#start((callId) => this.#native.authLogin(callId, name));
    promise.then(done, done);
    return promise;
  }

  // A log line from the core: to createRuntime({log}), else the console.
  [log](level, message) {
    const name = kLogLevels[level] ?? 'error';
    if (!this.#logSink) {
      console[name](`[mcprt] ${message}`);
      return;
    }
    try {
      this.#logSink(name, message);
    } catch (error) {
      console.error('[mcprt] the log function threw:', error);
    }
  }

  [authorize](request) {
    if (this.#disposed) return Promise.reject(new Error('the runtime was disposed'));
    const { url, serverName, redirectUri, signal } = request;
    if (this.#onAuthorize) return this.#onAuthorize(url, { serverName, redirectUri, signal });
    const popup = this.#popups.get(serverName);
    this.#popups.delete(serverName);
    return popupAuthorize(request, popup);
  }

  #load(begin) {
    const load = ++this.#loads;
    // Subscriptions whose first subscribe is still unanswered are aborted with it below;
    // the others move to the new manager once it has loaded.
    const held = [...this.#subscriptions].filter((record) => !this.#firstSubscribePending(record));
    // The load replaces the manager: what it had yet to answer never will be.
    for (const callId of this.#managerCalls) {
      this.#pending.get(callId)?.reject(new McprtError({ code: 'aborted', message: 'replaced by a newer discoverAndLoad or reload' }));
      this.#pending.delete(callId);
    }
    this.#managerCalls.clear();
    for (const record of held) {
      this.#subscriptionCalls.delete(record.callId);
      record.callId = 0;
      record.id = 0;
    }
    const promise = this.#start(begin);
    const settled = promise.then(() => {}, () => {});
    this.#loading = settled;
    settled.then(() => {
      if (this.#loading === settled) this.#loading = null;
      // A newer load restores them once it has loaded (this one's manager is gone already).
      if (load === this.#loads) this.#restoreSubscriptions();
    });
    return promise;
  }

  #firstSubscribePending(record) {
    return record.callId !== 0 && record.callId === record.firstCallId && this.#pending.has(record.callId);
  }

  // resources/subscribe for `record` on `server` ('' → the server that offers its URI);
  // resolves once the server took it (the record then holds the core's id).
  #sendSubscription(record, server) {
    let callId = 0;
    const promise = this.#managerCall((id) => {
      callId = id;
      record.callId = id;
      record.id = 0;
      this.#subscriptionCalls.set(id, record);
      this.#native.serverRequest(id, 'subscribe', server, JSON.stringify({ uri: record.uri }));
    });
    return promise.then((value) => {
      record.on ||= value.server;
      if (record.callId !== callId) return;  // a load moved it on meanwhile
      if (record.ended) {
        // Its function was called while the server was being asked.
        this.#subscriptionCalls.delete(callId);
        if (!this.#disposed) this.#native.unsubscribe(value.id);
        return;
      }
      record.id = value.id;
      record.on = value.server;
    }, (error) => {
      if (this.#subscriptionCalls.get(callId) === record) this.#subscriptionCalls.delete(callId);
      throw error;
    });
  }

  // After a load: every subscription the runtime held goes to the new manager, to the server
  // it names, else to the one that lists its URI now, else (the catalogs may still be on
  // their way) to the one it was on if that is still configured, else to the one with a
  // template that matches it. One that cannot be restored ends and is logged once.
  #restoreSubscriptions() {
    if (this.#disposed) return;
    const listing = new Map();
    for (const resource of this.resources()) {
      if (!listing.has(resource.uri)) listing.set(resource.uri, resource.server);
    }
    for (const record of [...this.#subscriptions]) {
      if (record.ended || record.callId !== 0) continue;
      let server = record.server || listing.get(record.uri) || '';
      if (!server && record.on && this.status(record.on) !== undefined) server = record.on;
      const sent = this.#sendSubscription(record, server);
      const callId = record.callId;
      sent.then(() => {
        if (record.ended || record.callId !== callId) return;
        notify(record.callback, { server: record.on, uri: record.uri, resubscribed: true });
      }, (error) => {
        // Ended by its function or dispose(), or moved on by a newer load: nothing to say.
        if (record.ended || record.callId !== callId) return;
        const message = `${server || record.on}: the subscription to ${record.uri} ended: it could not be made ` +
                        `again after discoverAndLoad / reload (${describeError(error)})`;
        this.#endSubscription(record, { code: error?.code ?? 'internal', message });
      });
    }
  }

  // Ends `record` (idempotent): the core's subscription with it, if it has one yet. `why`
  // (an error's {code, message, ...}): the runtime ends it, not its function; it is logged
  // (warn; unless the core did already) and the subscriber's onEnd learns it.
  #endSubscription(record, why) {
    if (record.ended) return;
    record.ended = true;
    this.#subscriptions.delete(record);
    if (this.#subscriptionCalls.get(record.callId) === record) this.#subscriptionCalls.delete(record.callId);
    if (record.id !== 0 && !this.#disposed) this.#native.unsubscribe(record.id);
    if (!why) return;
    if (why.logged !== true) this.#warn(why.message);
    if (record.onEnd) {
      notify(record.onEnd, { server: record.server || record.on, uri: record.uri,
                             error: new McprtError(why) });
    }
  }

  // The runtime's own warning, through the core's logger: its level, its masking of secrets.
  #warn(message) {
    if (!this.#disposed) this.#native.warn(message);
  }

  // addServer / removeServer run one after another, each after the load in flight (a
  // change made during a load would be lost with the manager the load replaces).
  #change(run) {
    const result = this.#changes.then(() => this.#loading).then(run);
    this.#changes = result.then(() => {}, () => {});
    return result;
  }

  // A call the manager answers (see #load).
  #managerCall(begin) {
    let id = 0;
    const promise = this.#start((callId) => {
      id = callId;
      this.#managerCalls.add(callId);
      begin(callId);
    });
    const done = () => this.#managerCalls.delete(id);
    promise.then(done, done);
    return promise;
  }

  #start(begin, onProgress) {
    if (this.#disposed) {
      return Promise.reject(new McprtError({ code: 'invalid_argument', message: 'the runtime was disposed' }));
    }
    const callId = this.#nextCall++;
    const promise = new Promise((resolve, reject) => this.#pending.set(callId, { resolve, reject, onProgress }));
    try {
      begin(callId);
    } catch (error) {
      // The module refused the call (a bad argument type): nothing is pending in C++.
      this.#pending.get(callId)?.reject(error);
      this.#pending.delete(callId);
    }
    return promise;
  }

  // From the C++ side (through loadModule's dispatcher).
  [dispatch](kind, callId, payload) {
    if (this.#disposed) return;
    const value = JSON.parse(payload);
    if (kind === 'resolve' || kind === 'reject') {
      const entry = this.#pending.get(callId);
      if (!entry) return;  // aborted or disposed already
      this.#pending.delete(callId);
      if (kind === 'resolve') entry.resolve(value ?? undefined);
      else entry.reject(new McprtError(value));
    } else if (kind === 'progress') {
      this.#pending.get(callId)?.onProgress?.(value);
    } else if (kind === 'toolsChanged') {
      const tools = this.tools();
      for (const listener of [...this.#toolsListeners]) notify(listener, tools);
    } else if (kind === 'status') {
      for (const listener of [...this.#statusListeners]) notify(listener, value);
    } else if (kind === 'catalogChanged') {
      const events = value === null ? kCatalogKinds.map((k) => ({ server: null, kind: k }))
        : [{ server: value.server, kind: kCatalogKinds[value.kind] }];
      for (const event of events) {
        for (const listener of [...this.#catalogListeners]) notify(listener, event);
      }
    } else if (kind === 'resourceUpdated') {
      const subscription = this.#subscriptionCalls.get(callId);
      if (!subscription) return;
      const update = { server: value.server, uri: String(value.uri) };
      if (typeof value.title === 'string') update.title = value.title;
      if (value.resubscribed === true) update.resubscribed = true;
      notify(subscription.callback, update);
    } else if (kind === 'subscriptionEnded') {
      // The core ended it (and logged why): it has no subscription left to unsubscribe.
      const subscription = this.#subscriptionCalls.get(callId);
      if (!subscription) return;
      subscription.id = 0;
      this.#endSubscription(subscription, { ...value, logged: true });
    } else if (kind === 'elicit') {
      this.#elicit(callId, value);
    } else if (kind === 'sample') {
      this.#sample(callId, value);
    }
  }

  // From the C++ side (inside a wasm call: reads state only).
  [listens]() {
    return !this.#disposed && this.#messageListeners.size > 0;
  }

  // From the C++ side: one message of the protocol tap.
  [tapped](server, sent, text) {
    if (this.#disposed || this.#messageListeners.size === 0) return;
    const message = { server, direction: sent ? 'send' : 'receive', message: JSON.parse(text) };
    for (const listener of [...this.#messageListeners]) notify(listener, message);
  }

  // Answers the core's input request `id` once (unless the runtime was disposed meanwhile).
  #answer(id, answer) {
    if (!this.#disposed) this.#native.answerInput(id, JSON.stringify(answer));
  }

  // A rejection, a throw or an answer without a valid action declines.
  #elicit(id, request) {
    Promise.resolve()
      .then(() => this.#onElicit(request))
      .then((answer) => {
        if (!answer || typeof answer !== 'object' || !kActions.has(answer.action)) {
          console.warn(`[mcprt] onElicit for ${request.server} did not resolve with {action: 'accept'|'decline'|'cancel'}; declined`);
          return { action: 'decline' };
        }
        const out = { action: answer.action };
        if (answer.action === 'accept' && answer.content && typeof answer.content === 'object' && !Array.isArray(answer.content)) {
          out.content = answer.content;
        }
        return out;
      }, () => ({ action: 'decline' }))
      .then((answer) => {
        try {
          this.#answer(id, answer);
        } catch (error) {
          // JSON.stringify refused the content (a cycle, a BigInt).
          console.warn(`[mcprt] onElicit's content for ${request.server} is not JSON (${describeError(error)}); declined`);
          this.#answer(id, { action: 'decline' });
        }
      });
  }

  // A rejection (or no result object) goes to the server as an error.
  #sample(id, request) {
    Promise.resolve()
      .then(() => this.#onSample(request))
      .then((result) => (result && typeof result === 'object' && !Array.isArray(result)
        ? { result }
        : { error: 'onSample did not resolve with a CreateMessageResult object' }),
      (error) => ({ error: `the sampling request was refused: ${describeError(error)}` }))
      .then((answer) => {
        try {
          this.#answer(id, answer);
        } catch (error) {
          // JSON.stringify refused the result (a cycle, a BigInt).
          this.#answer(id, { error: `onSample's result is not JSON: ${describeError(error)}` });
        }
      });
  }
}

// Creates a runtime. The wasm module is loaded once (per wasmUrl) and shared.
export async function createRuntime(options = {}) {
  const module = await loadModule(options);
  return new Runtime(module, options);
}
