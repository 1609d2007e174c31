// `host.http-request` for the component: fetch with a deadline, only to allowed origins, never
// following redirects (one could lead to an origin that is not allowed), keeping no body of 10 MiB
// or more (read as a stream, the request aborted there). Every status is a response; errors are the
// WIT `http-error` cases (`connect` only when nothing was sent). Same rules, cap and error text as the
// wasmtime host shim.

/**
 * The origin of an http(s) URL, normalised as the shim does (`http://host:port`, default port
 * dropped, lower case).
 * @param {string} url
 * @returns {string}
 */
export function originOf(url) {
  const parsed = new URL(url);
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
    throw new Error(`${url}: only http and https URLs are allowed`);
  }
  return parsed.origin.toLowerCase();
}

/** The largest answer body the wasmtime shim keeps (ureq's `read_to_vec` limit). */
const MAX_BODY_BYTES = 10 * 1024 * 1024;

/** The shim's error for a longer body, word for word (ureq's `BodyExceedsLimit`), as `transport`. */
const BODY_TOO_LARGE = { tag: 'transport', val: `the response body is larger than request limit: ${MAX_BODY_BYTES}` };

/**
 * @param {{ allowedOrigins: () => Iterable<string>, fetchImpl?: typeof fetch }} options
 *   `allowedOrigins` is read on every request, so the allowlist can follow a configuration reload.
 * @returns {(request: { method: string, url: string, headers: Array<[string, string]>,
 *   body: Uint8Array, timeoutMs: number }) => Promise<{ status: number,
 *   headers: Array<[string, string]>, body: Uint8Array }>}
 */
export function createHttpRequest({ allowedOrigins, fetchImpl = fetch }) {
  return async function httpRequest(request) {
    let origin;
    try {
      origin = originOf(request.url);
    } catch (error) {
      throw { tag: 'invalid-request', val: String(error.message ?? error) };
    }
    if (![...allowedOrigins()].includes(origin)) {
      throw { tag: 'refused', val: `${origin} is not an allowed origin` };
    }
    const tooLarge = new AbortController();
    const init = {
      method: request.method,
      headers: request.headers,
      body: request.body.length > 0 ? request.body : undefined,
      redirect: 'manual',
      // The deadline covers the body too: the same signal aborts a slow read.
      signal: AbortSignal.any([AbortSignal.timeout(Math.max(1, request.timeoutMs)), tooLarge.signal]),
    };
    let response;
    let body;
    try {
      response = await fetchImpl(request.url, init);
      body = await readBody(response, MAX_BODY_BYTES);
    } catch (error) {
      throw httpError(error);
    }
    if (body === undefined) {
      // Closes the connection: the rest of the body is never read.
      tooLarge.abort();
      throw BODY_TOO_LARGE;
    }
    return { status: response.status, headers: [...response.headers].map(([k, v]) => [k.toLowerCase(), v]), body };
  };
}

/** The most requests one `http-batch` may carry, as in the wasmtime shim. */
export const MAX_BATCH = 16;

/**
 * `host.http-batch`: every request at once, each answered as `httpRequest` would (a WIT `result`
 * per request, in order). A batch over {@link MAX_BATCH} is refused whole, as the shim does.
 * @param {(request: any) => Promise<any>} httpRequest
 */
export function createHttpBatch(httpRequest) {
  return async function httpBatch(requests) {
    if (requests.length > MAX_BATCH) {
      const refusal = { tag: 'invalid-request', val: `a batch holds at most ${MAX_BATCH} requests, not ${requests.length}` };
      return requests.map(() => ({ tag: 'err', val: refusal }));
    }
    return Promise.all(requests.map((request) => httpRequest(request).then(
      (val) => ({ tag: 'ok', val }),
      (val) => ({ tag: 'err', val }),
    )));
  };
}

/** Error codes that mean no connection was made, so nothing was sent (`connect`). Anything else after
 * a connection (reset, closed early: ECONNRESET, EPIPE, UND_ERR_SOCKET, ...) is `transport`: the
 * outcome is unknown. When unsure, not `connect`. TLS handshake failures (ERR_TLS_*, ERR_SSL_*,
 * CERT_*) are `connect` too. */
const CONNECT_FAILURES = new Set([
  'ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EAI_FAIL', 'EAI_NONAME', 'EHOSTUNREACH', 'ENETUNREACH',
  'EADDRNOTAVAIL', 'UND_ERR_CONNECT_TIMEOUT', 'UNABLE_TO_VERIFY_LEAF_SIGNATURE', 'DEPTH_ZERO_SELF_SIGNED_CERT',
  'SELF_SIGNED_CERT_IN_CHAIN', 'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
]);

/**
 * The body, read as a stream; undefined once it reaches `limit` bytes (as ureq, which fails on the
 * read after the limit even when the body ends there), so no more than `limit` bytes are ever held.
 * @param {Response} response
 * @param {number} limit
 * @returns {Promise<Uint8Array | undefined>}
 */
async function readBody(response, limit) {
  if (!response.body) return new Uint8Array();
  const reader = response.body.getReader();
  const chunks = [];
  let length = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    length += value.length;
    if (length >= limit) return undefined;
    chunks.push(value);
  }
  const body = new Uint8Array(length);
  let offset = 0;
  for (const chunk of chunks) {
    body.set(chunk, offset);
    offset += chunk.length;
  }
  return body;
}

/** A fetch failure as the WIT `http-error`. */
function httpError(error) {
  if (error?.name === 'TimeoutError' || error?.cause?.name === 'TimeoutError') return { tag: 'timeout' };
  if (error instanceof TypeError && !error.cause) {
    // fetch rejects a malformed method or header before sending anything.
    return { tag: 'invalid-request', val: error.message };
  }
  const code = error?.cause?.code ?? error?.code;
  const detail = error?.cause?.message ?? '';
  const tag = CONNECT_FAILURES.has(code) || /^(ERR_TLS_|ERR_SSL_|CERT_)/.test(code ?? '') ? 'connect' : 'transport';
  return { tag, val: [code, error?.message ?? String(error), detail].filter(Boolean).join(': ') };
}
