// wasm_conformance_client.mjs hands the suite's environment to the runtime: the protocol
// version as the server entry's `protocol`, the context's pre-registered client as
// `oauth: {clientId, clientSecret}`; a broken context is a clear error; no secret or key
// from the context is ever printed.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import test from 'node:test';
import { fileURLToPath } from 'node:url';

const kClient = path.join(path.dirname(fileURLToPath(import.meta.url)), 'wasm_conformance_client.mjs');
const kUrl = 'http://localhost:1/mcp';

function run(env) {
  const clean = { ...process.env };
  delete clean.MCP_CONFORMANCE_CONTEXT;
  delete clean.MCP_CONFORMANCE_PROTOCOL_VERSION;
  delete clean.MCP_CONFORMANCE_SCENARIO;
  const r = spawnSync(process.execPath, [kClient, '--print-entry', kUrl],
                      { env: { ...clean, ...env }, encoding: 'utf8', timeout: 30000 });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

test('without the suite variables the entry is the URL at the 2025-11-25 wire', () => {
  const r = run({});
  assert.equal(r.status, 0, r.stderr);
  assert.deepEqual(JSON.parse(r.stdout), { url: kUrl, protocol: '2025-11-25' });
});

test('MCP_CONFORMANCE_PROTOCOL_VERSION becomes the protocol', () => {
  const r = run({ MCP_CONFORMANCE_PROTOCOL_VERSION: '2026-07-28' });
  assert.equal(r.status, 0, r.stderr);
  assert.equal(JSON.parse(r.stdout).protocol, '2026-07-28');
});

test('a protocol version that is not a date is refused', () => {
  const r = run({ MCP_CONFORMANCE_PROTOCOL_VERSION: 'latest' });
  assert.equal(r.status, 2);
  assert.match(r.stderr, /MCP_CONFORMANCE_PROTOCOL_VERSION must be a dated protocol version \(got "latest"\)/);
});

test('the pre-registered client of the context becomes oauth.clientId/clientSecret, secrets unprinted', () => {
  const secret = 'sekrit-value-7f3a';
  const r = run({
    MCP_CONFORMANCE_SCENARIO: 'auth/pre-registration',
    MCP_CONFORMANCE_CONTEXT: JSON.stringify({
      name: 'auth/pre-registration', client_id: 'conformance-client', client_secret: secret,
      issuer: 'http://localhost:2',
    }),
  });
  assert.equal(r.status, 0, r.stderr);
  const entry = JSON.parse(r.stdout);
  assert.deepEqual(entry.oauth, { clientId: 'conformance-client', clientSecret: `<${secret.length} characters>` });
  assert.match(r.stderr, /context fields with no config counterpart: issuer$/m);
  for (const text of [r.stdout, r.stderr]) assert.ok(!text.includes(secret), 'the client secret was printed');
});

test('a client-credentials scenario gets the client_credentials grant and the context key', () => {
  const pem = '-----BEGIN PRIVATE KEY-----\nMIGHAgEAMBMGByqGSM49\n-----END PRIVATE KEY-----';
  const r = run({
    MCP_CONFORMANCE_SCENARIO: 'auth/client-credentials-jwt',
    MCP_CONFORMANCE_CONTEXT: JSON.stringify({
      name: 'auth/client-credentials-jwt', client_id: 'm2m', private_key_pem: pem, signing_algorithm: 'ES256',
    }),
  });
  assert.equal(r.status, 0, r.stderr);
  assert.deepEqual(JSON.parse(r.stdout).oauth, {
    clientId: 'm2m', privateKey: `<${pem.length} characters>`, signingAlg: 'ES256', grant: 'client_credentials',
  });
  for (const text of [r.stdout, r.stderr]) assert.ok(!text.includes('MIGHAgEAMBMGByqGSM49'), 'the key was printed');
});

test('other scenarios keep the default grant', () => {
  const r = run({ MCP_CONFORMANCE_SCENARIO: 'auth/metadata-default' });
  assert.equal(r.status, 0, r.stderr);
  assert.equal(JSON.parse(r.stdout).oauth, undefined);
});

test('a context that is not a JSON object is refused with the variable named', () => {
  for (const bad of ['{"client_secret": sekrit-value-7f3a}', '[1,2]', '"text"']) {
    const r = run({ MCP_CONFORMANCE_CONTEXT: bad });
    assert.equal(r.status, 2, `context ${bad}`);
    assert.match(r.stderr, /MCP_CONFORMANCE_CONTEXT (is not JSON|must be a JSON object)/);
    assert.ok(!r.stderr.includes('sekrit'), 'the broken context was quoted');
  }
});
