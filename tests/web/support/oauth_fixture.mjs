// The loopback OAuth world (demo/oauth: mcprt-oauth-fixture, an authorization server and
// the MCP server it protects, both on 127.0.0.1) for the web tests, plus the user step the
// tests use: follow the authorization URL's redirect with fetch (Node gives the Location
// of a manual redirect; a browser would hide it).
import { existsSync } from 'node:fs';

import { startProcess, stopProcess } from './harness.mjs';

// Starts the fixture with `args` (its flags); resolves with its ready line's fields and
// helpers for the admin endpoints.
export async function startOAuthFixture(args = []) {
  const bin = process.env.MCPRT_OAUTH_FIXTURE;
  if (!bin || !existsSync(bin)) {
    throw new Error(`the OAuth fixture is missing (MCPRT_OAUTH_FIXTURE=${bin}); build mcprt_oauth_fixture in a ` +
                    'native tree first (scripts/test builds build/native), or configure this wasm tree with ' +
                    '-DMCPRT_WEB_TEST_OAUTH_FIXTURE=<native build>/demo/mcprt-oauth-fixture');
  }
  const { child, match, output } = await startProcess(bin, [...args], {},
                                                      /^(\{.*"mcp_url".*\})$/m, 'mcprt-oauth-fixture');
  const ready = JSON.parse(match[1]);
  const admin = async (path, body) => {
    const response = await fetch(`${ready.admin_url.replace(/\/$/, '')}/${path}`, {
      method: body === undefined ? 'GET' : 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    if (!response.ok) throw new Error(`fixture admin ${path}: HTTP ${response.status}`);
    const text = await response.text();
    return text ? JSON.parse(text) : null;
  };
  return {
    ...ready,
    child,
    log: output,
    admin,
    // {"authorize.ok": n, "token.refresh_token.ok": n, ...}
    counters: async () => (await admin('counters')).counters ?? {},
    // Its request log (stderr), without the ready line (which lists the secret prefixes).
    requestLog: () => output().split('\n').filter((l) => !l.startsWith('{')).join('\n'),
    stop: () => stopProcess(child),
  };
}

// onAuthorize for Node: GETs the authorization URL without following its redirect and
// resolves with the Location (the fixture approves at once with a 302 to the redirect URI).
export async function followRedirect(url, { signal } = {}) {
  const response = await fetch(url, { redirect: 'manual', signal });
  const location = response.headers.get('location');
  if (response.status < 300 || response.status > 399 || !location) {
    throw new Error(`the authorization server answered ${response.status} without a redirect`);
  }
  return new URL(location, url).href;
}

// Every string in `value` (deep) that contains one of the fixture's secret prefixes.
export function secretsIn(text, prefixes) {
  return prefixes.filter((p) => String(text).includes(p));
}
