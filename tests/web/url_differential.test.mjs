// mcprt's URL parser (core/src/protocol/url.cpp, compiled to wasm in the test-only seams
// module) against Node's WHATWG URL over tests/fixtures/url-corpus.json (SPEC §17: URLs
// parse the way browsers do; a URL mcprt and fetch would read differently is rejected).
//
// For every case:
//  - mcprt accepts  => Node accepts it as http(s), with the same href (without the
//    fragment, which mcprt drops), host, port, pathname, search, username and password;
//  - Node accepts an http(s) URL that mcprt rejects => the case is marked `deliberate` in
//    the corpus with a reason from ALLOWED below, and mcprt's error says that reason;
//  - a case marked `deliberate` is one of those (the mark cannot go stale).
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';

import { loadWasmModule } from './support/harness.mjs';

const seams = await loadWasmModule('MCPRT_WEB_SEAMS_MODULE');
const corpus = JSON.parse(readFileSync(new URL('../fixtures/url-corpus.json', import.meta.url), 'utf8'));

// The deliberate rejections: what a browser accepts and mcprt refuses rather than read
// differently. Each names the error mcprt gives.
const ALLOWED = {
  // A host that is not ASCII after percent-decoding goes through IDNA (UTS-46) in a
  // browser: mapping (fullwidth letters, U+3002 as a dot, soft hyphen dropped, "①" -> "1"),
  // NFC, punycode. mcprt has no IDNA tables, so it cannot compute the host a browser would
  // connect to; such URLs must be written in punycode.
  idna: /is not ASCII: a browser would map it with IDNA/,
  // An "xn--" label a browser decodes and validates with the IDNA tables. mcprt accepts a
  // punycode label only when every decoded code point is in a small set it knows to be
  // valid as is (Latin-1, Greek, Cyrillic, kana, CJK, Hangul) and the label is canonical;
  // others (emoji, right-to-left scripts, deviation characters like ß, all-ASCII decodings)
  // are refused.
  punycode: /punycode label/,
  // Port 0 is a valid URL port, but nothing can be connected to there.
  'port-0': /port 0 cannot be connected to/,
};

function nodeParse(input, base) {
  try {
    const url = base === undefined ? new URL(input) : new URL(input, base);
    return url.protocol === 'http:' || url.protocol === 'https:' ? url : null;
  } catch {
    return null;
  }
}

function mcprtParse({ input, base }) {
  const out = JSON.parse(base === undefined ? seams.urlParse(input) : seams.urlResolve(base, input));
  return out;
}

const withoutFragment = (href) => (href.includes('#') ? href.slice(0, href.indexOf('#')) : href);

// The differences between an accepted mcprt parse and Node's URL (empty when equal).
function differences(m, n) {
  const d = [];
  const check = (what, mine, node) => {
    if (mine !== node) d.push(`${what}: mcprt ${JSON.stringify(mine)}, Node ${JSON.stringify(node)}`);
  };
  check('href', m.href, withoutFragment(n.href));
  check('scheme', `${m.scheme}:`, n.protocol);
  check('host', m.host, n.hostname);
  check('port', m.port, n.port === '' ? (n.protocol === 'https:' ? 443 : 80) : Number(n.port));
  check('explicit port', m.explicitPort, n.port !== '');
  check('pathname', m.path, n.pathname);
  check('search', m.hasQuery && m.query !== '' ? `?${m.query}` : '', n.search);
  check('username', m.username, n.username);
  check('password', m.password, n.password);
  check('origin', m.origin, n.origin);
  return d;
}

const label = (c) => (c.base === undefined ? JSON.stringify(c.input) : `${JSON.stringify(c.input)} against ${c.base}`);

describe('URL parsing: mcprt (wasm) against Node URL', () => {
  test('Corpus_IsLargeAndCoversRelativeReferences', () => {
    assert.ok(corpus.cases.length >= 300, `${corpus.cases.length} cases`);
    assert.ok(corpus.cases.filter((c) => c.base !== undefined).length >= 50);
  });

  test('Differential_AcceptedUrlsMatchNodeAndEveryRejectionOfAValidUrlIsDeliberate', () => {
    const counts = { acceptedEqual: 0, rejectedByBoth: 0, rejectedDeliberately: 0 };
    const byReason = {};
    const failures = [];
    for (const c of corpus.cases) {
      const m = mcprtParse(c);
      const n = nodeParse(c.input, c.base);
      if (m.ok) {
        if (c.base === undefined) {
          if (!m.plainAgrees) failures.push(`${label(c)}: parse_http_url and parse_http_url_checked disagree`);
        } else if (m.resolved !== m.href) {
          failures.push(`${label(c)}: resolve_url gave ${JSON.stringify(m.resolved)}, the parse ${m.href}`);
        }
        if (!n) {
          failures.push(`${label(c)}: mcprt accepts (${m.href}) but Node rejects it`);
          continue;
        }
        const d = differences(m, n);
        if (d.length) failures.push(`${label(c)}: ${d.join('; ')}`);
        else counts.acceptedEqual++;
        if (c.deliberate) failures.push(`${label(c)}: marked deliberate (${c.deliberate}) but mcprt accepts it`);
        continue;
      }
      if (c.base !== undefined && m.resolved !== null) {
        failures.push(`${label(c)}: resolve_url gave ${m.resolved} where the parse failed`);
      }
      if (!n) {
        counts.rejectedByBoth++;
        if (c.deliberate) failures.push(`${label(c)}: marked deliberate but Node rejects it too`);
        continue;
      }
      const pattern = ALLOWED[c.deliberate];
      if (!pattern) {
        failures.push(`${label(c)}: Node accepts it as ${n.href}, mcprt rejects it (${m.error}) and it is not a deliberate rejection`);
      } else if (!pattern.test(m.error)) {
        failures.push(`${label(c)}: marked ${c.deliberate}, but mcprt's reason is: ${m.error}`);
      } else {
        counts.rejectedDeliberately++;
        byReason[c.deliberate] = (byReason[c.deliberate] || 0) + 1;
      }
    }
    console.log(`url differential: ${corpus.cases.length} cases; accepted and equal to Node: ${counts.acceptedEqual}; ` +
                `rejected by both: ${counts.rejectedByBoth}; rejected deliberately: ${counts.rejectedDeliberately} ` +
                `(${Object.entries(byReason).map(([k, v]) => `${k} ${v}`).join(', ')})`);
    assert.deepEqual(failures, []);
  });

  test('Issue9_BackslashBeforeTheAtSignEndsTheAuthorityAsInFetch', () => {
    const m = JSON.parse(seams.urlParse('http://127.0.0.1\\@evil/'));
    assert.equal(m.ok, true);
    assert.equal(m.host, '127.0.0.1');
    assert.equal(m.username, '');
    assert.equal(m.path, '/@evil/');
    assert.equal(new URL('http://127.0.0.1\\@evil/').hostname, m.host);
  });

  test('Issue9_HostThatIsOnlyColonsIsRejected', () => {
    for (const input of ['http://::', 'http://::/', 'http://::1/']) {
      const m = JSON.parse(seams.urlParse(input));
      assert.equal(m.ok, false, input);
      assert.throws(() => new URL(input), undefined, input);
    }
  });
});
