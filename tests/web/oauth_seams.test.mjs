// The web OAuth seams under Node, through the test-only module mcprt_web_seams.mjs
// (tests/web/support/web_seams_module.cpp): WebCrypto against node:crypto, WebCredentialStore
// against fake-indexeddb and the in-realm lock FIFO (Node 20 has no navigator.locks; the
// Web Locks path runs in headless Chromium, oauth_browser.test.mjs), WebAuthorizer against
// a Module.mcprtAuthorize this file installs.
import 'fake-indexeddb/auto';
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash, createPublicKey, generateKeyPairSync, verify } from 'node:crypto';

import { loadWasmModule, waitFor } from './support/harness.mjs';

const seams = await loadWasmModule('MCPRT_WEB_SEAMS_MODULE');

const calls = new Map();
let insideCall = false;
let nextCall = 1000;
const contractViolations = [];
seams.seamEvent = (id, kind, payload) => {
  if (insideCall) contractViolations.push(`${kind} for call ${id} ran inside the starting call`);
  const entry = calls.get(id);
  if (entry) entry.events.push({ kind, ...JSON.parse(payload) });
};
function call(fn) {
  const id = nextCall++;
  const entry = { id, events: [] };
  calls.set(id, entry);
  insideCall = true;
  try {
    entry.startResult = fn(id);
  } finally {
    insideCall = false;
  }
  return entry;
}
const event = (entry, kind, what = kind) => waitFor(() => entry.events.find((e) => e.kind === kind), `${what} of call ${entry.id}`);
// Lets every queued macrotask (the executor's drains, IndexedDB, microtasks) run a few times.
const settle = async (rounds = 20) => {
  for (let i = 0; i < rounds; ++i) await new Promise((r) => setImmediate(r));
};

after(() => {
  assert.deepEqual(contractViolations, [], 'no callback may run inside the call that started it');
});

const hex = (buffer) => Buffer.from(buffer).toString('hex');

describe('WebCrypto', () => {
  test('RandomBytes_AreFreshAndAsLongAsAsked_EvenPastTheApis64KiBLimit', () => {
    const a = JSON.parse(seams.cryptoRandom(32));
    const b = JSON.parse(seams.cryptoRandom(32));
    assert.equal(a.ok, true);
    assert.equal(a.hex.length, 64);
    assert.notEqual(a.hex, b.hex);
    const big = JSON.parse(seams.cryptoRandom(70000));
    assert.equal(big.hex.length, 140000);
    // The part past the first 64 KiB is filled too (not left as zeros).
    assert.ok(/[1-9a-f]/.test(big.hex.slice(65536 * 2)), 'bytes after the first 64 KiB are random');
    assert.deepEqual(JSON.parse(seams.cryptoRandom(0)), { ok: true, hex: '' });
  });

  test('Sha256_MatchesNodeCrypto_ForTextBinaryAndEmptyInput', async () => {
    const inputs = [Buffer.from('abc'), Buffer.from([0, 255, 0, 1, 2, 128]), Buffer.alloc(0), Buffer.alloc(200000, 7)];
    for (const input of inputs) {
      const entry = call((id) => seams.cryptoSha256(id, hex(input)));
      const answer = await event(entry, 'sha256');
      assert.equal(answer.ok, true, JSON.stringify(answer));
      assert.equal(answer.hex, createHash('sha256').update(input).digest('hex'));
    }
  });

  const signingInput = 'eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJjbGllbnQifQ';

  test('SignRs256_VerifiesWithThePublicKey', async () => {
    const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const pem = privateKey.export({ type: 'pkcs8', format: 'pem' });
    const entry = call((id) => seams.cryptoSign(id, 'RS256', pem, signingInput));
    const answer = await event(entry, 'sign');
    assert.equal(answer.ok, true, JSON.stringify(answer));
    const signature = Buffer.from(answer.hex, 'hex');
    assert.equal(signature.length, 256);
    assert.ok(verify('sha256', Buffer.from(signingInput), publicKey, signature));
    assert.ok(!verify('sha256', Buffer.from(signingInput + 'x'), publicKey, signature));
  });

  test('SignEs256_Is64BytesRAndSAndVerifies', async () => {
    const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const pem = privateKey.export({ type: 'pkcs8', format: 'pem' });
    const entry = call((id) => seams.cryptoSign(id, 'ES256', pem, signingInput));
    const answer = await event(entry, 'sign');
    assert.equal(answer.ok, true, JSON.stringify(answer));
    const signature = Buffer.from(answer.hex, 'hex');
    assert.equal(signature.length, 64, 'the JWS form (R||S), not DER');
    assert.ok(verify('sha256', Buffer.from(signingInput), { key: publicKey, dsaEncoding: 'ieee-p1363' }, signature));
  });

  test('SignJws_BadKeysAndAlgsAreInvalidArgumentErrorsThatNeverQuoteTheKey', async () => {
    const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey;
    const ec = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey;
    const pkcs1 = rsa.export({ type: 'pkcs1', format: 'pem' });
    const sec1 = ec.export({ type: 'sec1', format: 'pem' });
    const ecPkcs8 = ec.export({ type: 'pkcs8', format: 'pem' });
    const p384 = generateKeyPairSync('ec', { namedCurve: 'P-384' }).privateKey.export({ type: 'pkcs8', format: 'pem' });
    const cases = [
      { alg: 'RS256', pem: pkcs1, says: /PKCS#8.*openssl pkcs8 -topk8/ },
      { alg: 'ES256', pem: sec1, says: /PKCS#8.*openssl pkcs8 -topk8/ },
      { alg: 'RS256', pem: ecPkcs8, says: /could not be read as an RSA key/ },
      { alg: 'ES256', pem: p384, says: /could not be read as a P-256 EC key/ },
      { alg: 'ES256', pem: '-----BEGIN PRIVATE KEY-----\n%%%not base64%%%\n-----END PRIVATE KEY-----\n', says: /not base64|could not be read/ },
      { alg: 'RS256', pem: 'just some text', says: /not a PEM "BEGIN PRIVATE KEY"/ },
      { alg: 'HS256', pem: ecPkcs8, says: /unsupported alg "HS256" \(RS256 and ES256 are\)/ },
      { alg: 'none', pem: ecPkcs8, says: /unsupported alg "none"/ },
    ];
    for (const c of cases) {
      const entry = call((id) => seams.cryptoSign(id, c.alg, c.pem, signingInput));
      const answer = await event(entry, 'sign');
      assert.equal(answer.ok, false, `${c.alg} with ${c.pem.slice(0, 30)} must fail`);
      assert.equal(answer.error.code, 'invalid_argument', JSON.stringify(answer));
      assert.match(answer.error.message, c.says);
      // No line of the key's base64 body appears in the message.
      for (const line of c.pem.split('\n').filter((l) => l.length > 20 && !l.startsWith('-----'))) {
        assert.ok(!answer.error.message.includes(line.slice(0, 20)), `the message quotes the key: ${answer.error.message}`);
      }
    }
  });

  test('DestroyingTheCrypto_DropsAnswersStillRunning', async () => {
    const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const pem = privateKey.export({ type: 'pkcs8', format: 'pem' });
    const digest = call((id) => seams.cryptoSha256(id, '00'));
    const sign = call((id) => seams.cryptoSign(id, 'ES256', pem, signingInput));
    seams.cryptoReset();
    // A call on the new object still works, and the old ones never answer.
    const fresh = call((id) => seams.cryptoSha256(id, hex(Buffer.from('abc'))));
    await event(fresh, 'sha256');
    await settle();
    assert.deepEqual(digest.events, []);
    assert.deepEqual(sign.events, []);
  });
});

describe('WebCredentialStore', () => {
  const db = 'mcprt-oauth-seams';
  const store = 'credentials';

  test('Values_PersistInTheirOwnStore_ApartFromTheToolCache', async () => {
    const put = call((id) => seams.credPut(id, db, store, 'as|res', '{"refresh_token":"rt-1"}'));
    assert.equal((await event(put, 'put')).ok, true);
    // The tool cache's store in the same database does not see it.
    const other = call((id) => seams.kvGet(id, db, 'tools', 'as|res'));
    assert.deepEqual(await event(other, 'get'), { kind: 'get', ok: true, found: false });
    // A new store object on the same names reads it back (IndexedDB, not memory).
    seams.credDrop(db, store);
    const got = call((id) => seams.credGet(id, db, store, 'as|res'));
    assert.deepEqual(await event(got, 'get'), { kind: 'get', ok: true, found: true, value: '{"refresh_token":"rt-1"}' });
    const removed = call((id) => seams.credRemove(id, db, store, 'as|res'));
    assert.equal((await event(removed, 'remove')).ok, true);
    const gone = call((id) => seams.credGet(id, db, store, 'as|res'));
    assert.equal((await event(gone, 'get')).found, false);
  });

  test('Lock_IsExclusivePerKey_AndWaitersGetItInOrder', async () => {
    const first = call((id) => seams.credLock(id, db, store, 'k1', 5000));
    assert.equal((await event(first, 'lock')).ok, true);
    // A second store object on the same names (another runtime in the page) waits too.
    const second = call((id) => seams.credLock(id, db + '-x', store, 'k1', 5000));  // other db: other lock
    const third = call((id) => seams.credLock(id, db, store, 'k1', 5000));
    const fourth = call((id) => seams.credLock(id, db, store, 'k1', 5000));
    const otherKey = call((id) => seams.credLock(id, db, store, 'k2', 5000));
    assert.equal((await event(second, 'lock')).ok, true, 'another database has its own lock');
    assert.equal((await event(otherKey, 'lock')).ok, true, 'another key has its own lock');
    await settle();
    assert.deepEqual(third.events, [], 'k1 is held');
    assert.deepEqual(fourth.events, []);
    assert.equal(seams.credUnlock(first.id), true);
    assert.equal((await event(third, 'lock')).ok, true);
    await settle();
    assert.deepEqual(fourth.events, [], 'still held by the third');
    seams.credUnlock(third.id);
    assert.equal((await event(fourth, 'lock')).ok, true);
    for (const e of [second, fourth, otherKey]) seams.credUnlock(e.id);
  });

  test('Lock_TimesOutNamingTheKey_AndATimedOutWaiterNeverGetsIt', async () => {
    const holder = call((id) => seams.credLock(id, db, store, 'slow', 5000));
    await event(holder, 'lock');
    const waiter = call((id) => seams.credLock(id, db, store, 'slow', 30));
    const answer = await event(waiter, 'lock');
    assert.equal(answer.ok, false);
    assert.equal(answer.error.code, 'timeout');
    assert.match(answer.error.message, /the credential lock on "slow" was not free within 30 ms/);
    // The next waiter is not blocked by the one that gave up.
    const next = call((id) => seams.credLock(id, db, store, 'slow', 5000));
    seams.credUnlock(holder.id);
    assert.equal((await event(next, 'lock')).ok, true);
    await settle();
    assert.equal(waiter.events.length, 1, 'the timed-out waiter got exactly one answer');
    seams.credUnlock(next.id);
  });

  test('Lock_WithNoWait_TriesOnce', async () => {
    const holder = call((id) => seams.credLock(id, db, store, 'once', 0));
    assert.equal((await event(holder, 'lock')).ok, true, 'free: granted at once');
    const busy = call((id) => seams.credLock(id, db, store, 'once', 0));
    const answer = await event(busy, 'lock');
    assert.equal(answer.error.code, 'timeout');
    assert.match(answer.error.message, /"once" is held elsewhere/);
    seams.credUnlock(holder.id);
    const again = call((id) => seams.credLock(id, db, store, 'once', 0));
    assert.equal((await event(again, 'lock')).ok, true);
    seams.credUnlock(again.id);
  });

  test('DroppingTheStore_RunsNoPendingLockCallback_WithdrawsIt_AndKeepsHeldLocksUntilReleased', async () => {
    const dbName = 'mcprt-oauth-drop';
    const holder = call((id) => seams.credLock(id, dbName, store, 'k', 5000));
    await event(holder, 'lock');
    const pending = call((id) => seams.credLock(id, dbName, store, 'k', 5000));
    seams.credDrop(dbName, store);
    // A lock held past its store still excludes others until it is released.
    const later = call((id) => seams.credLock(id, dbName, store, 'k', 5000));
    await settle();
    assert.deepEqual(later.events, []);
    seams.credUnlock(holder.id);
    // The withdrawn request does not take the lock: the later one gets it.
    assert.equal((await event(later, 'lock')).ok, true);
    await settle();
    assert.deepEqual(pending.events, [], 'no callback after the store was destroyed');
    seams.credUnlock(later.id);
  });
});

describe('WebAuthorizer', () => {
  let requests = [];
  let behaviour = async () => 'http://127.0.0.1:9/callback?code=c&state=s';
  seams.mcprtAuthorize = (request) => {
    requests.push(request);
    return behaviour(request);
  };
  after(() => { delete seams.mcprtAuthorize; });

  const begin = (redirect = 'http://127.0.0.1:8080/oauth-callback.html', timeoutMs = 10000) => {
    const entry = call((id) => seams.authBegin(id, redirect, 7, 'tracker', timeoutMs));
    entry.begun = JSON.parse(entry.startResult);
    return entry;
  };

  test('Begin_NeedsAnHttpRedirectUri_AndSaysWhatToConfigure', () => {
    for (const bad of ['', 'file:///tmp/oauth-callback.html', 'oauth-callback.html']) {
      const flow = begin(bad);
      assert.equal(flow.begun.ok, false, bad);
      assert.equal(flow.begun.error.code, 'invalid_config');
      assert.match(flow.begun.error.message, /no usable OAuth redirect URI for tracker.*createRuntime\(\{redirectUri\}\)/);
    }
    assert.deepEqual(begin().begun, { ok: true, redirectUri: 'http://127.0.0.1:8080/oauth-callback.html' });
  });

  test('Authorize_PassesTheRequestToTheHandler_AndCompletesWithItsRedirect', async () => {
    requests = [];
    behaviour = async (r) => new URL(`${r.redirectUri}?code=abc&state=xyz`);  // a URL object is fine too
    const flow = begin();
    seams.authAuthorize(flow.id, 'http://127.0.0.1:9000/authorize?client_id=c&state=xyz');
    const answer = await event(flow, 'authorize');
    assert.deepEqual(answer, { kind: 'authorize', ok: true, url: 'http://127.0.0.1:8080/oauth-callback.html?code=abc&state=xyz' });
    assert.equal(requests.length, 1);
    assert.equal(requests[0].handler, 7);
    assert.equal(requests[0].url, 'http://127.0.0.1:9000/authorize?client_id=c&state=xyz');
    assert.equal(requests[0].serverName, 'tracker');
    assert.equal(requests[0].redirectUri, 'http://127.0.0.1:8080/oauth-callback.html');
    assert.equal(requests[0].signal.aborted, false);
    // authorize() is once per flow.
    seams.authAuthorize(flow.id, 'http://127.0.0.1:9000/authorize');
    await waitFor(() => flow.events.length === 2, 'the second answer');
    assert.equal(flow.events[1].error.code, 'invalid_argument');
    assert.equal(requests.length, 1);
    seams.authDrop(flow.id);
  });

  test('Authorize_HandlerFailures_AreErrorsThatSayWhatHappened', async () => {
    const cases = [
      { run: async () => { throw new Error('the user closed the sign-in window'); }, code: 'needs_auth', says: /the sign-in to tracker did not finish: the user closed the sign-in window/ },
      { run: async () => { throw new DOMException('stopped', 'AbortError'); }, code: 'aborted', says: /the sign-in to tracker was cancelled/ },
      { run: async () => 42, code: 'needs_auth', says: /must resolve with the redirect URL \(a string\), not number/ },
      { run: async () => null, code: 'needs_auth', says: /not null/ },
      { run: () => { throw new TypeError('sync throw'); }, code: 'needs_auth', says: /sync throw/ },
    ];
    for (const c of cases) {
      behaviour = c.run;
      const flow = begin();
      seams.authAuthorize(flow.id, 'http://127.0.0.1:9000/authorize');
      const answer = await event(flow, 'authorize');
      assert.equal(answer.ok, false);
      assert.equal(answer.error.code, c.code, JSON.stringify(answer));
      assert.match(answer.error.message, c.says);
      seams.authDrop(flow.id);
    }
    const handler = seams.mcprtAuthorize;
    delete seams.mcprtAuthorize;
    try {
      const flow = begin();
      seams.authAuthorize(flow.id, 'http://127.0.0.1:9000/authorize');
      const answer = await event(flow, 'authorize');
      assert.equal(answer.error.code, 'needs_auth');
      assert.match(answer.error.message, /no sign-in handler is installed \(createRuntime's onAuthorize\)/);
      seams.authDrop(flow.id);
    } finally {
      seams.mcprtAuthorize = handler;
    }
  });

  test('Authorize_TimesOut_AbortingTheHandlersSignal', async () => {
    requests = [];
    behaviour = (r) => new Promise(() => {});  // the user never comes back
    const flow = begin(undefined, 40);
    seams.authAuthorize(flow.id, 'http://127.0.0.1:9000/authorize');
    const answer = await event(flow, 'authorize');
    assert.equal(answer.error.code, 'timeout');
    assert.match(answer.error.message, /the sign-in to tracker did not finish within 40 ms/);
    assert.equal(requests[0].signal.aborted, true);
    seams.authDrop(flow.id);
  });

  test('DroppingTheFlow_AbortsTheSignal_AndNoAnswerArrives', async () => {
    requests = [];
    let finish;
    behaviour = () => new Promise((resolve) => { finish = resolve; });
    const flow = begin();
    seams.authAuthorize(flow.id, 'http://127.0.0.1:9000/authorize');
    await waitFor(() => requests.length === 1, 'the handler call');
    seams.authDrop(flow.id);
    assert.equal(requests[0].signal.aborted, true);
    finish('http://127.0.0.1:8080/oauth-callback.html?code=late&state=s');
    await settle();
    assert.deepEqual(flow.events, []);
  });
});
