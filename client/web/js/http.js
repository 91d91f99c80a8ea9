// Small fetch wrapper for every screen (the REST API of api.js, CellWar, replay,
// campaign): any headers, optional bearer token, Idempotency-Key on POST, ApiError with
// the API's machine code.

/** An error answer of the API: HTTP status + machine code from {"error": {code, message}}. */
export class ApiError extends Error {
  constructor(status, code, message, retryAfterS = null) {
    super(message || code);
    this.status = status;
    this.code = code;
    /** Seconds the server asked to wait before asking again (its Retry-After), or null. */
    this.retryAfterS = retryAfterS;
  }
}

export function newId() {
  if (globalThis.crypto?.randomUUID) return crypto.randomUUID();
  return `${Date.now().toString(36)}-${Math.random().toString(36).slice(2)}`;
}

/**
 * @param {'GET'|'POST'} method
 * @param {string} path same-origin path (query included)
 * @param {{token?: string, body?: object, headers?: object, idempotencyKey?: string}} [opts]
 *   idempotencyKey: the POST's Idempotency-Key (a new one when not given)
 * @returns {Promise<any>} the JSON answer
 * @throws {ApiError}
 */
export async function request(method, path, { token, body, headers = {}, idempotencyKey } = {}) {
  const h = { Accept: 'application/json', ...headers };
  if (body !== undefined) h['Content-Type'] = 'application/json';
  if (token) h.Authorization = `Bearer ${token}`;
  if (method === 'POST') h['Idempotency-Key'] = idempotencyKey || newId();
  let res;
  try {
    res = await fetch(path, { method, headers: h, body: body === undefined ? undefined : JSON.stringify(body) });
  } catch (err) {
    throw new ApiError(0, 'NETWORK', err.message);
  }
  let data = null;
  try {
    data = await res.json();
  } catch {
    data = null;
  }
  if (!res.ok) {
    const e = data && data.error;
    const after = res.headers.get('Retry-After');
    const wait = after !== null && /^\d+$/.test(after.trim()) ? Number(after) : null;
    throw new ApiError(res.status, (e && e.code) || `HTTP_${res.status}`, (e && e.message) || res.statusText, wait);
  }
  return data;
}

export const gamePath = (id) => `/game/${encodeURIComponent(id)}`;
