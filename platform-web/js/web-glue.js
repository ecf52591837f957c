// --pre-js of every module built on platform-web: helpers the EM_JS glue of
// platform-web/src shares (EM_JS bodies cannot share functions of their own).
//
// Module.mcprtSettle(id, outcome, value): hands the answer of a JS call the C++ side waits
// on (platform-web/src/web_js_calls.hpp) to mcprt_web_js_settle. `value` is a string
// (sent as UTF-8) or a Uint8Array / ArrayBuffer (sent as raw bytes).
Module['mcprtSettle'] = function (id, outcome, value) {
  var bytes;
  if (typeof value == 'string') {
    bytes = null;
  } else if (value instanceof ArrayBuffer) {
    bytes = new Uint8Array(value);
  } else if (value && value.buffer instanceof ArrayBuffer) {
    bytes = new Uint8Array(value.buffer, value.byteOffset, value.byteLength);
  } else {
    value = String(value);
    bytes = null;
  }
  var size = bytes ? bytes.length : lengthBytesUTF8(value);
  var p = _malloc(size + 1);
  try {
    if (bytes) HEAPU8.set(bytes, p);
    else stringToUTF8(value, p, size + 1);
    Module['_mcprt_web_js_settle'](id, outcome, p, size);
  } finally {
    _free(p);
  }
};

// "Name: message" of a thrown value, for error texts (never the value's other fields).
Module['mcprtDescribe'] = function (e) {
  if (!e) return 'unknown error';
  if (typeof e == 'string') return e;
  var text = e.message || String(e);
  return e.name && e.name != 'Error' && text.indexOf(e.name) != 0 ? e.name + ': ' + text : text;
};
