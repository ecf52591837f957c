// wasm_conformance_client.mjs hands the suite's environment to the runtime: the protocol
// version as the server entry's `protocol`, the context's pre-registered client as
// `oauth: {clientId, clientSecret}`; a broken context is a clear error; no secret or key
// from the context is ever printed. And the calls it makes per scenario (plannedCalls).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import test from 'node:test';
import { fileURLToPath, pathToFileURL } from 'node:url';

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

test("the context's toolCalls are calls to make, not config (never reported as unmapped)", () => {
  const r = run({
    MCP_CONFORMANCE_SCENARIO: 'http-custom-headers',
    MCP_CONFORMANCE_CONTEXT: JSON.stringify({ name: 'http-custom-headers', toolCalls: [{ name: 'x', arguments: {} }] }),
  });
  assert.equal(r.status, 0, r.stderr);
  assert.deepEqual(JSON.parse(r.stdout), { url: kUrl, protocol: '2025-11-25' });
  assert.doesNotMatch(r.stderr, /no config counterpart/);
});

// The calls each scenario makes, over listed tools the way the runtime gives them.
const { plannedCalls } = await import(pathToFileURL(kClient).href);
const listed = (names) => names.map((tool) => ({ tool, name: `mcp_conformance_${tool}`, inputSchema: { type: 'object' } }));

test('http-custom-headers makes exactly the calls of the context, with their arguments', () => {
  const toolCalls = [
    { name: 'test_custom_headers', arguments: { region: 'us-west1', empty_val: '', non_ascii_val: 'Hello, 世界' } },
    { name: 'test_custom_headers_null', arguments: { region: 'us-east1', verbose: null } },
  ];
  const calls = plannedCalls('http-custom-headers', listed(['test_custom_headers', 'test_custom_headers_null', 'other']),
                             { toolCalls });
  assert.deepEqual(calls, toolCalls.map((c) => ({ tool: c.name, arguments: c.arguments })));
  assert.throws(() => plannedCalls('http-custom-headers', listed(['x']), {}), /names no toolCalls/);
  assert.throws(() => plannedCalls('http-custom-headers', listed(['x']), { toolCalls: [{ arguments: {} }] }),
                /toolCalls entry has no name/);
});

test('json-schema-2020-12-preservation echoes the focal inputSchema as it was listed', () => {
  const schema = { $schema: 'https://json-schema.org/draft/2020-12/schema', $defs: { a: { $anchor: 'x' } },
                   allOf: [{ anyOf: [{ required: ['p'] }] }], if: {}, then: {}, else: {}, additionalProperties: false };
  const tools = [{ tool: 'json_schema_2020_12_tool', name: 'mcp_conformance_json_schema_2020_12_tool', inputSchema: schema },
                 ...listed(['json_schema_echo'])];
  assert.deepEqual(plannedCalls('json-schema-2020-12-preservation', tools, {}),
                   [{ tool: 'json_schema_echo', arguments: { schema } }]);
  assert.throws(() => plannedCalls('json-schema-2020-12-preservation', listed(['json_schema_echo']), {}),
                /no json_schema_2020_12_tool/);
});

test('list-only scenarios call nothing; the others call every tool (add_numbers with numbers)', () => {
  assert.deepEqual(plannedCalls('json-schema-ref-no-deref', listed(['lookup_user']), {}), []);
  assert.deepEqual(plannedCalls('initialize', listed(['a']), {}), []);
  assert.deepEqual(plannedCalls('tools_call', listed(['add_numbers', 'b']), {}),
                   [{ tool: 'add_numbers', arguments: { a: 5, b: 3 } }, { tool: 'b', arguments: {} }]);
});
