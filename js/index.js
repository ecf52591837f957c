// mcprt — the ES module browser and Node agents import. A thin, typed wrapper (see
// index.d.ts) over the WebAssembly module (mcprt.mjs + mcprt.wasm next to this file):
// memoized module init, Promise methods over an id → resolver table, AbortSignal,
// explicit dispose(). Every MCP rule lives in the C++ core.
//
//   import { createRuntime } from 'mcprt';
//   const rt = await createRuntime();
//   await rt.discoverAndLoad({ servers: { demo: { url: 'https://example.com/mcp' } } });
//   const result = await rt.callTool('mcp_demo_echo', { message: 'hi' }, { signal });

const modules = new Map();  // module URL → Promise of the instantiated wasm module

// Loads (once per URL) and instantiates the wasm module.
function loadModule(options) {
  const url = String(options.moduleUrl ?? new URL('./mcprt.mjs', import.meta.url));
  let pending = modules.get(url);
  if (!pending) {
    pending = import(url).then(({ default: factory }) => factory(options.moduleArgs ?? {})).then((module) => {
      module.mcprtRuntimeEvent = (runtimeId, kind, callId, payload) => {
        // Outside the wasm call stack: a listener may call back into the runtime.
        queueMicrotask(() => runtimes.get(runtimeId)?.[dispatch](kind, callId, payload));
      };
      return module;
    });
    pending.catch(() => modules.delete(url));  // a failed load may be retried
    modules.set(url, pending);
  }
  return pending;
}

const runtimes = new Map();  // runtime id → Runtime (the C++ side names runtimes by id)
const dispatch = Symbol('mcprt.dispatch');  // the C++ → JS entry point, kept off the API
let nextRuntimeId = 1;

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
  #disposed = false;

  constructor(module, options) {
    this.#module = module;
    this.#id = nextRuntimeId++;
    const { moduleUrl, moduleArgs, ...nativeOptions } = options;
    this.#native = new module.WebRuntime(this.#id, JSON.stringify(nativeOptions));
    runtimes.set(this.#id, this);
  }

  // Connects to `servers` (an object of server configs, `{name: {url, ...}}`, or
  // `{mcpServers: {...}}`) through discovery, the manager and the startup gate. Replaces
  // any earlier configuration.
  discoverAndLoad({ servers } = {}) {
    return this.#start((callId) => this.#native.discoverAndLoad(callId, JSON.stringify(servers ?? {})));
  }

  // Disconnects everything, discovers the same servers again and reconnects.
  reload() {
    return this.#start((callId) => this.#native.reload(callId));
  }

  // The current tools, sorted by name.
  tools() {
    if (this.#disposed) return [];
    return JSON.parse(this.#native.toolsJson());
  }

  // status(name) → that server's state, or undefined; status() → every server's.
  status(name) {
    if (this.#disposed) return name === undefined ? [] : undefined;
    const value = JSON.parse(this.#native.statusJson(name ?? ''));
    return value === null ? undefined : value;
  }

  callTool(name, args = {}, { signal, onProgress } = {}) {
    if (signal?.aborted) return Promise.reject(abortError(signal));
    let callId = 0;
    const promise = this.#start((id) => {
      callId = id;
      this.#native.callTool(id, String(name), JSON.stringify(args ?? {}), typeof onProgress === 'function');
    }, onProgress);
    if (signal && callId) {
      const onAbort = () => {
        const entry = this.#pending.get(callId);
        if (!entry) return;
        this.#pending.delete(callId);
        entry.reject(abortError(signal));
        // The core sends notifications/cancelled to the server.
        if (!this.#disposed) this.#native.abortCall(callId, typeof signal.reason === 'string' ? signal.reason : '');
      };
      signal.addEventListener('abort', onAbort, { once: true });
      promise.then(() => signal.removeEventListener('abort', onAbort),
                   () => signal.removeEventListener('abort', onAbort));
    }
    return promise;
  }

  disconnectServer(name) {
    return this.#start((callId) => this.#native.disconnectServer(callId, String(name)));
  }

  disconnectAll() {
    return this.#start((callId) => this.#native.disconnectAll(callId));
  }

  // Called after any change of tools(); returns the function that unsubscribes.
  onToolsChanged(callback) {
    this.#toolsListeners.add(callback);
    return () => this.#toolsListeners.delete(callback);
  }

  // Called with {server, phase, toolCount, source, error} as servers connect, fail,
  // reconnect and disconnect; returns the function that unsubscribes.
  onStatus(callback) {
    this.#statusListeners.add(callback);
    return () => this.#statusListeners.delete(callback);
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
  }

  get disposed() {
    return this.#disposed;
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
    }
  }
}

// Creates a runtime. The wasm module is loaded once (per moduleUrl) and shared.
export async function createRuntime(options = {}) {
  const module = await loadModule(options);
  return new Runtime(module, options);
}
