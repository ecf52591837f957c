// Types of the `mcprt` ES module (index.js). tests/web/runtime.test.mjs checks that
// every Runtime method index.js defines is declared here and the other way round.

/** One server entry, as in an `mcpServers` config file (web: http and sse only). */
export interface ServerConfig {
  type?: 'http' | 'sse' | 'streamable-http' | string;
  url?: string;
  headers?: Record<string, string>;
  headerPolicy?: 'origin-locked';
  enabled?: boolean | string;
  /** Startup and list timeout in ms; 0 = none. */
  timeout?: number;
  /** Per tools/call timeout in ms. */
  toolTimeout?: number;
  includeTools?: string[];
  excludeTools?: string[];
  reconnect?: boolean | { maxAttempts?: number; initialDelayMs?: number; maxDelayMs?: number };
  auth?: { type: 'bearer' | 'oauth'; credentialId?: string };
  [key: string]: unknown;
}

/** `{name: config}` or `{mcpServers: {name: config}}`. */
export type ServersConfig = Record<string, ServerConfig> | { mcpServers: Record<string, ServerConfig> };

export interface RuntimeOptions {
  /**
   * Where mcprt.wasm is (a URL; in Node also a file path). Default:
   * `new URL('./mcprt.wasm', import.meta.url)`, the file next to index.js (vite and other
   * bundlers emit it; with esbuild copy it next to the bundle or pass its URL). The module
   * is loaded once per wasmUrl.
   */
  wasmUrl?: string | URL;
  /** Passed to the Emscripten module factory (e.g. wasmBinary). */
  moduleArgs?: Record<string, unknown>;
  clientName?: string;
  clientVersion?: string;
  /** How long discoverAndLoad waits before serving cached tools (default 250). */
  startupGateMs?: number;
  /** false: never wait for servers without a cache entry; their tools arrive later. */
  waitForUncached?: boolean;
  /** Default per-server connect + list timeout in ms (default 30000). */
  timeoutMs?: number;
  /** Default tools/call timeout in ms, re-armed by progress (default 60000); 0 = none. */
  toolTimeoutMs?: number;
  /**
   * Tool cache in IndexedDB: true (db "mcprt", store "tools"), false, or names. Default:
   * on where there is an `indexedDB` (browsers; Node after `import 'fake-indexeddb/auto'`),
   * off where there is none.
   */
  cache?: boolean | { database?: string; store?: string };
  /**
   * Lowest level logged. Default "warn" in a browser and with `log`; "silent" in Node
   * without `log` (a library does not write to its host's stderr unless asked).
   */
  logLevel?: 'debug' | 'info' | 'warn' | 'error' | 'silent';
  /** Where log lines go instead of the console (secrets in them are already masked). */
  log?: (level: 'debug' | 'info' | 'warn' | 'error', message: string) => void;
  /** Shown as the config's source ("mcp:<server> via <sourceName>"). Default "page". */
  sourceName?: string;
  /**
   * The OAuth user step: show `url` (the authorization server's page) to the user and
   * resolve with the URL the authorization server redirected to (`redirectUri?code=…&state=…`).
   * `signal` aborts when the sign-in is given up (timeout, dispose). Default: a popup on
   * oauth-callback.html, which works only from `auth.login()` called in a click handler.
   */
  onAuthorize?: (url: string, info: { serverName: string; redirectUri: string; signal: AbortSignal }) => Promise<string | URL>;
  /** The OAuth redirect URI. Default: oauth-callback.html next to index.js (must be this page's origin for the popup). */
  redirectUri?: string | URL;
  /**
   * Whether a server's 401 may start the user step by itself (default: true with
   * onAuthorize, false for the popup); otherwise the server shows 'needs-auth' until auth.login().
   */
  interactiveAuth?: boolean;
  /** OAuth credentials in IndexedDB (default: the cache's database, store "credentials"). */
  credentials?: { database?: string; store?: string };
  /** A Client ID Metadata Document URL (an https URL used as client_id where the AS supports it). */
  clientMetadataUrl?: string;
  /** client_name in Dynamic Client Registration (default: clientName). */
  oauthClientName?: string;
  /** client_uri in Dynamic Client Registration. */
  clientUri?: string;
  /** application_type in Dynamic Client Registration (default "web" in a browser, "native" in Node). */
  applicationType?: 'web' | 'native';
  /** How long a sign-in waits for the user step, in ms (default 300000). */
  authorizeTimeoutMs?: number;
  /**
   * A server asks the user for input (elicitation; 2025 `elicitation/create` or a 2026
   * input request). Show `request.server` and its message; in form mode ask for the
   * fields of `requestedSchema` (a flat object schema; properties the answer leaves out
   * get the schema's `default`), in URL mode show the full `url` and open it only with the
   * user's consent (the runtime never opens it). Resolve with the user's choice; a rejected
   * promise (or an answer without a valid action) declines. Without onElicit, elicitation
   * is not offered to servers.
   */
  onElicit?: (request: ElicitationRequest) => Promise<ElicitationAnswer> | ElicitationAnswer;
  /**
   * A server asks the host's model for a message (sampling/createMessage). Resolve with a
   * CreateMessageResult; a rejected promise goes to the server as an error. Without
   * onSample, sampling is not offered to servers.
   */
  onSample?: (request: SamplingRequest) => Promise<CreateMessageResult> | CreateMessageResult;
  /** A protocol log from the start: the same as calling runtime.onMessage(onMessage). */
  onMessage?: (message: ProtocolMessage) => void;
  /**
   * What roots/list answers (SPEC §3.4): file:// URIs (each root is named by its last path
   * segment). Default (and false): the roots capability is not offered — a page has no
   * directory of its own. A server may widen what it reads to the roots it is given.
   */
  roots?: false | Array<Root | string>;
  /**
   * The wire for servers whose config has no `protocol` (SPEC §14): "auto" (default:
   * 2026-07-28 when the server speaks it, else the initialize era), "2026-07-28", "legacy"
   * or a 2025-era version.
   */
  protocol?: 'auto' | 'legacy' | '2026-07-28' | string;
  /**
   * Servers whose tool annotations (readOnlyHint, destructiveHint, ...) the host trusts:
   * their tools say `annotationsTrusted: true`. Default: none.
   */
  trustedServers?: string[];
  /**
   * Tool search (SPEC §16): with many tools the model gets `visibleTools()` — the loaded
   * tools and the meta-tool `mcp_tool_search` — instead of every definition. 'auto'
   * (default): active while there are more than `threshold` (30) MCP tools, or their
   * definitions are more than `tokenBudget` estimated tokens (0: the count alone decides);
   * 'on', 'off'. `tools()` lists every tool either way.
   */
  toolSearch?: ToolSearchMode | { mode?: ToolSearchMode; threshold?: number; tokenBudget?: number };
}

export type ToolSearchMode = 'auto' | 'on' | 'off';

/** One MCP tool as the tool-search catalog shows it. `summary` is the server's text. */
export interface ToolCatalogEntry {
  /** mcp_<server>_<tool> */
  name: string;
  server: string;
  /** The description's first 200 bytes or less, on one line, cut at a word boundary. */
  summary: string;
  /** Given to the model now (loaded, always loaded, or tool search inactive). */
  loaded: boolean;
}

/** One hit of searchTools (and of mcp_tool_search), best first. */
export interface ToolSearchHit {
  name: string;
  server: string;
  /**
   * Why it matched: the query is its name ('exact-name'), part of its name
   * ('name-substring'), named in `select:` ('selected'), or BM25 over its name, title,
   * server, description and property names ('keywords'). The kinds rank in that order
   * ('selected' keeps the order given).
   */
  match: 'exact-name' | 'name-substring' | 'keywords' | 'selected';
  /** The BM25 score (0 for select: and name matches without keywords). */
  score: number;
  summary: string;
}

export interface Root {
  /** A file:///... URI. */
  uri: string;
  /** Shown to servers; currently always the URI's last path segment. */
  name?: string;
}

/** One elicitation request, as the host shows it. `message` and everything in the schema is the server's (untrusted) text. */
export type ElicitationRequest =
  | { server: string; mode: 'form'; message: string; requestedSchema: Record<string, unknown> }
  | { server: string; mode: 'url'; message: string; url: string; elicitationId?: string };

export interface ElicitationAnswer {
  action: 'accept' | 'decline' | 'cancel';
  /** accept in form mode: the values by property name (left-out ones get their defaults). */
  content?: Record<string, unknown>;
}

export interface SamplingRequest {
  server: string;
  /** CreateMessageRequest params as the server sent them: messages, maxTokens, systemPrompt, modelPreferences, ... */
  params: { messages: Array<Record<string, unknown>>; maxTokens?: number; [key: string]: unknown };
}

/** The sampling answer: {role, content, model, stopReason?}. */
export interface CreateMessageResult {
  role: 'assistant' | 'user';
  content: Record<string, unknown> | Array<Record<string, unknown>>;
  model: string;
  stopReason?: string;
  [key: string]: unknown;
}

export interface SourceInfo {
  provider: string;
  providerName: string;
  path: string;
  level: 'user' | 'project' | 'native';
}

export interface ToolInfo {
  /** mcp_<server>_<tool>: the name to call. */
  name: string;
  server: string;
  /** The server's own tool name. */
  tool: string;
  description: string;
  inputSchema: Record<string, unknown>;
  /** `<server>/<tool>` */
  label: string;
  /** Built from the cache while the server is still connecting. */
  deferred: boolean;
  /** "mcp:<server> via <source>" */
  path: string;
  /**
   * The definition's `annotations` ({title, readOnlyHint, destructiveHint, idempotentHint,
   * openWorldHint, ...}); {} when it has none. Claims the server makes about its own tool.
   */
  annotations: ToolAnnotations;
  /** Whether the host trusts those claims: the server is in createRuntime's `trustedServers`. */
  annotationsTrusted: boolean;
}

export interface ToolAnnotations {
  title?: string;
  readOnlyHint?: boolean;
  destructiveHint?: boolean;
  idempotentHint?: boolean;
  openWorldHint?: boolean;
  [key: string]: unknown;
}

/**
 * A server's resource, as listed (resources/list). Every text is the server's (untrusted).
 * `fromCache`: from the cache, the server has not listed it in this run yet.
 */
export interface ResourceInfo {
  server: string;
  uri: string;
  name: string;
  title?: string;
  description?: string;
  mimeType?: string;
  /** Bytes, when the server says. */
  size?: number;
  annotations?: Record<string, unknown>;
  /** The server is connected and takes resources/subscribe (runtime.subscribe). */
  subscribable: boolean;
  fromCache: boolean;
}

/** A server's resource template (resources/templates/list): an RFC 6570 URI template. */
export interface ResourceTemplateInfo {
  server: string;
  uriTemplate: string;
  name: string;
  title?: string;
  description?: string;
  mimeType?: string;
  annotations?: Record<string, unknown>;
  fromCache: boolean;
}

export interface PromptArgument {
  name: string;
  title?: string;
  description?: string;
  required: boolean;
}

/** A server's prompt (prompts/list). */
export interface PromptInfo {
  server: string;
  name: string;
  title?: string;
  description?: string;
  arguments: PromptArgument[];
  fromCache: boolean;
}

/** One item of resources/read's `contents`: text, or binary as base64 (`blob`). */
export type ResourceContents =
  | { uri: string; mimeType?: string; text: string; [key: string]: unknown }
  | { uri: string; mimeType?: string; blob: string; [key: string]: unknown };

/** resources/read's result, as the server sent it. */
export interface ReadResourceResult {
  contents: ResourceContents[];
  [key: string]: unknown;
}

/** prompts/get's result, as the server sent it. */
export interface GetPromptResult {
  description?: string;
  /** {role: 'user' | 'assistant', content: {type: 'text', text} | {type: 'image', ...} | {type: 'resource', resource} | ...} */
  messages: Array<{ role: 'user' | 'assistant'; content: Record<string, unknown> }>;
  [key: string]: unknown;
}

export type CompletionRef = { type: 'ref/prompt'; name: string } | { type: 'ref/resource'; uri: string };

export interface CompleteRequest {
  /** Default: the one server with that prompt (ref.name may be "server:name") or template. */
  server?: string;
  ref: CompletionRef;
  /** The argument (prompt argument or template variable) being filled. */
  argument: string;
  /** What is typed so far (default ""). */
  value?: string;
  /** The values of the other arguments already given. */
  context?: { arguments: Record<string, string> };
  signal?: AbortSignal;
}

export interface CompleteResult {
  values: string[];
  total?: number;
  hasMore?: boolean;
}

export interface CatalogChangedEvent {
  /** null: a discoverAndLoad or reload replaced every server's catalogs. */
  server: string | null;
  kind: 'resources' | 'resourceTemplates' | 'prompts';
}

/** What a subscription's callback gets on each notifications/resources/updated. */
export interface ResourceUpdate {
  server: string;
  uri: string;
  title?: string;
  /**
   * Not a server's notification: the subscription was taken again after a reconnect or a
   * discoverAndLoad / reload, and whatever changed in between was never notified. Read the
   * resource again.
   */
  resubscribed?: true;
}

/** Why a subscription ended by itself (subscribe's `onEnd`). */
export interface SubscriptionEnd {
  server: string;
  uri: string;
  error: McprtError;
}

export interface SubscribeOptions {
  /** The server to subscribe on (default: see readResource). */
  server?: string;
  /**
   * Called once if the subscription ends without its function being called: the server
   * refused it again after a reconnect, a discoverAndLoad / reload's configuration could
   * not take it, or removeServer removed its server. Not called after dispose().
   */
  onEnd?: (end: SubscriptionEnd) => void;
}

export interface RequestOptions {
  /** The server to ask (default: see the method). */
  server?: string;
  /** Aborting rejects with an AbortError and cancels the request on the server. */
  signal?: AbortSignal;
}

export interface LoadError {
  path: string;
  error: string;
  /** Empty for file-level errors. */
  server: string;
}

export interface LoadResult {
  tools: ToolInfo[];
  errors: LoadError[];
  warnings: string[];
  connectedServers: string[];
  /** Servers that need an OAuth login (phase 'needs-auth'); each also has an entry in `errors`. */
  needsAuthServers: string[];
}

/**
 * What addServer resolves with once the server's startup gate answered (the shape of
 * LoadResult, for that one server).
 */
export interface AddServerResult {
  /** The added server's tools (deferred ones from the cache when it is still connecting). */
  tools: ToolInfo[];
  /** Its error, when it failed (or needs a sign-in). */
  errors: LoadError[];
  /** [name] when it is connected. */
  connectedServers: string[];
  /** [name] when it needs an OAuth sign-in. */
  needsAuthServers: string[];
}

/** One JSON-RPC message of a server, as onMessage shows it. */
export interface ProtocolMessage {
  server: string;
  /** 'send': from this runtime to the server; 'receive': from the server. */
  direction: 'send' | 'receive';
  /** The parsed JSON-RPC message (a request, notification or response). */
  message: Record<string, unknown>;
}

export interface CallResult {
  /** The MCP content blocks, unchanged. */
  content: Array<Record<string, unknown>>;
  structuredContent: unknown;
  isError: boolean;
  /** Text rendering for a model (text blocks joined, resources as [Resource: uri]). */
  text: string;
  truncated: boolean;
  /**
   * Set when mcprt made the result from a local error instead of the server's answer:
   * 'needs_auth' (sign in with auth.login: the server wants more scopes or lost its
   * authorization), 'not_connected', 'timeout', ...
   */
  errorCode?: string;
}

export interface CallOptions {
  /** Aborting rejects the call with an AbortError and cancels it on the server. */
  signal?: AbortSignal;
  /** notifications/progress params: {progressToken, progress, total?, message?}. */
  onProgress?: (progress: { progress: number; total?: number; message?: string; [key: string]: unknown }) => void;
}

export interface ErrorInfo {
  code: string;
  message: string;
  wireCode?: number;
  data?: unknown;
}

/**
 * 'needs-auth': the server wants an OAuth authorization only the user can give; its cached
 * tools stay listed (deferred) and calling one resolves at once with isError and a text
 * that says how to sign in.
 */
export type ServerPhase = 'connecting' | 'connected' | 'reconnecting' | 'disconnected' | 'failed' | 'needs-auth';

export interface ServerStatus {
  name: string;
  status: 'connected' | 'connecting' | 'disconnected';
  phase: ServerPhase;
  attempts: number;
  toolCount: number;
  toolsFromCache: boolean;
  /** Its entries in resources(), resourceTemplates(), prompts(). */
  resourceCount: number;
  resourceTemplateCount: number;
  promptCount: number;
  /** Its catalogs are being listed (after its tools, on every connection) or re-listed after a list_changed. */
  catalogsRefreshing: boolean;
  circuitOpen: boolean;
  source: SourceInfo;
  error: ErrorInfo | null;
}

export interface StatusEvent {
  server: string;
  phase: ServerPhase;
  toolCount: number;
  source: SourceInfo;
  error: ErrorInfo | null;
}

/** What is stored for a server's OAuth sign-in. Never a token, a secret or a code. */
export interface AuthStatus {
  server: string;
  url: string;
  /** A usable access token, or a refresh token to get one. */
  signedIn: boolean;
  /** The authorization server ("" until discovered). */
  issuer: string;
  /** The resource the tokens are for. */
  resource: string;
  clientId: string;
  clientSource: 'config' | 'metadata-document' | 'registration' | '';
  grant: 'authorization_code' | 'client_credentials' | string;
  hasAccessToken: boolean;
  hasRefreshToken: boolean;
  /** Unix ms, or null when the authorization server gave no lifetime. */
  expiresAt: number | null;
  expired: boolean;
  scopes: string[];
}

export interface RuntimeAuth {
  /**
   * Signs in to an http/sse server of the last discoverAndLoad (the user step: onAuthorize or
   * the popup), stores the tokens in IndexedDB and reconnects the server. Call it from a
   * click handler when using the default popup. Rejects with the reason (McprtError).
   */
  login(server: string): Promise<AuthStatus>;
  /** Forgets the server's tokens (its client registration stays) and reconnects it: it then shows 'needs-auth'. */
  logout(server: string): Promise<void>;
  /** Every http/sse server's sign-in state, or one server's (undefined when unknown). */
  status(): Promise<AuthStatus[]>;
  status(server: string): Promise<AuthStatus | undefined>;
}

/** A failure from the runtime; `code` is the core's error code ("transport", "timeout", ...). */
export declare class McprtError extends Error {
  constructor(detail?: ErrorInfo);
  code: string;
  wireCode?: number;
  data?: unknown;
}

export interface Runtime {
  /** Connects to `servers`; resolves at the startup gate. Replaces an earlier configuration. */
  discoverAndLoad(options: { servers: ServersConfig }): Promise<LoadResult>;
  /** Disconnects all, rediscovers the same servers, reconnects. */
  reload(): Promise<LoadResult>;
  /**
   * Adds one server and connects only it; every other connection is left as it is (no
   * reconnect). The same config of a known server again reconnects it only if it is down
   * (disconnected, failed); a changed config replaces its connection. An invalid config
   * rejects (McprtError code 'invalid_config'), and so does one whose endpoint another
   * server already has (one endpoint, one connection): the server keeps the config and
   * connection it had. addServer and removeServer run one after another, each after a
   * discoverAndLoad or reload in flight; before any load an empty one is made first.
   */
  addServer(name: string, config: ServerConfig): Promise<AddServerResult>;
  /** Disconnects one server and forgets it (status(name) is undefined, reload leaves it out). */
  removeServer(name: string): Promise<void>;
  /** Every MCP tool, sorted by name, whatever tool search defers. */
  tools(): ToolInfo[];
  /**
   * The tools to give the model, sorted by name: every MCP tool while tool search is
   * inactive; while it is active the loaded ones (found by searches, loadTools or a call;
   * a server's `alwaysLoad`) and `mcp_tool_search` (server '', the runtime's own tool).
   * Changes to it fire onToolsChanged.
   */
  visibleTools(): ToolInfo[];
  /** Whether tool search is active now (mode 'on', or 'auto' above its threshold). */
  toolSearchActive(): boolean;
  /** Other tool search options, applied at once (the loaded set stays); onToolsChanged follows. */
  setToolSearch(options: RuntimeOptions['toolSearch']): void;
  /** Every MCP tool with its one-line summary and whether it is loaded, sorted by name. */
  catalog(): ToolCatalogEntry[];
  /** The deferred tools as "name: summary" lines, for the host's system prompt ('' when none). */
  catalogText(): string;
  /**
   * What `mcp_tool_search {query, limit}` finds, without loading it: keywords, or
   * "select:a,b" for exact names. `limit` 0 (default) means 8; at most 50.
   */
  searchTools(query: string, options?: { limit?: number }): ToolSearchHit[];
  /** Adds tools (mcp_ names) to the loaded set for the conversation; returns the names that are no MCP tool. */
  loadTools(names: string[]): string[];
  /** The loaded set, sorted. */
  loadedTools(): string[];
  /** Empties the loaded set (a new conversation). */
  resetLoadedTools(): void;
  /**
   * One server's state, or every server's. A server disconnected with disconnectServer
   * stays listed with status and phase 'disconnected' until it is connected again
   * (addServer, reload); undefined when unknown or removed.
   */
  status(name: string): ServerStatus | undefined;
  status(): ServerStatus[];
  /**
   * Calls a tool by its mcp_ name, or `mcp_tool_search` ({query, limit?}: its hits join the
   * loaded set, and the result carries their full definitions). A deferred tool called by
   * name is loaded. Tool failures resolve with isError; abort rejects (AbortError).
   */
  callTool(name: string, args?: Record<string, unknown>, options?: CallOptions): Promise<CallResult>;
  /**
   * Every server's resources, sorted by server and URI: listed once its tools are, again
   * on the server's list_changed and on reconnects; from the cache (fromCache) before it
   * answers. A server without resources has none.
   */
  resources(): ResourceInfo[];
  /** Every server's resource templates, sorted by server and uriTemplate. */
  resourceTemplates(): ResourceTemplateInfo[];
  /** Every server's prompts, sorted by server and name. */
  prompts(): PromptInfo[];
  /**
   * resources/read. Without `server`: the first server (by name) that lists `uri`, else the
   * first with a template that matches it; none → McprtError 'invalid_argument'.
   */
  readResource(uri: string, options?: RequestOptions): Promise<ReadResourceResult>;
  /**
   * Subscribes to `uri` (resources/subscribe; `server` as for readResource): `callback`
   * gets every notifications/resources/updated for it until the function this resolves
   * with is called (idempotent; resources/unsubscribe). Resolves once the server took the
   * subscription; rejects when it refused it or does not support subscriptions.
   *
   * The subscription outlives reconnects and discoverAndLoad / reload: once a load has
   * resolved it is subscribed again on the new configuration, on the `server` given, else
   * the server that lists `uri` now, else (its catalog may not be listed yet) the server it
   * was on if that is still configured, else the one with a template that matches it.
   * Each time it is taken again (after a reconnect or a load) `callback` gets an update
   * with `resubscribed: true`, since a change in between was never notified.
   * One that cannot be (its server is gone or disabled, or refuses), or whose server
   * removeServer removes, ends: one 'warn' log line (`log` / the console, at logLevel
   * 'warn' or lower, secrets masked) naming the server and `uri`, and `onEnd`; calling its
   * function then does nothing. A subscribe() still unanswered when a load starts rejects
   * with McprtError 'aborted' (like every call of the replaced manager) and is not
   * subscribed again.
   */
  subscribe(uri: string, callback: (update: ResourceUpdate) => void, options?: SubscribeOptions): Promise<() => void>;
  /**
   * prompts/get with string arguments. `name` is "server:name" or a bare name exactly one
   * server lists (several → McprtError 'invalid_argument' naming the candidates); or pass
   * `server`.
   */
  getPrompt(name: string, args?: Record<string, string>, options?: RequestOptions): Promise<GetPromptResult>;
  /** completion/complete for a prompt argument or a template variable. */
  complete(request: CompleteRequest): Promise<CompleteResult>;
  /** After a server's resources, templates or prompts changed. Returns the unsubscribe function. */
  onCatalogChanged(callback: (event: CatalogChangedEvent) => void): () => void;
  /** Closes one server's connection (no reconnect); it stays listed as 'disconnected'. */
  disconnectServer(name: string): Promise<void>;
  disconnectAll(): Promise<void>;
  /** Returns the unsubscribe function. */
  onToolsChanged(callback: (tools: ToolInfo[]) => void): () => void;
  /** Returns the unsubscribe function. */
  onStatus(callback: (event: StatusEvent) => void): () => void;
  /**
   * Every JSON-RPC message sent to or received from any server, in order (a protocol
   * log). Messages are copied out of the module only while a listener is installed.
   * Returns the unsubscribe function.
   */
  onMessage(callback: (message: ProtocolMessage) => void): () => void;
  /** OAuth sign-ins of the servers (SPEC §13). */
  readonly auth: RuntimeAuth;
  /** Closes every connection and frees the module's objects; pending promises reject. */
  dispose(): void;
  readonly disposed: boolean;
}

/** Loads the wasm module (once per wasmUrl) and creates a runtime. */
export declare function createRuntime(options?: RuntimeOptions): Promise<Runtime>;
