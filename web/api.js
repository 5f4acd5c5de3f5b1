// Talking to parley serve: JSON requests with the API key, errors turned into
// kind messages, and answers streamed over the WebSocket (/v1/ws) with
// server-sent events (POST /v1/chat/completions) as the fallback.

const KEY_STORAGE = 'parley.apiKey';

export const getApiKey = () => localStorage.getItem(KEY_STORAGE) || '';
export function setApiKey(key) {
  if (key) localStorage.setItem(KEY_STORAGE, key);
  else localStorage.removeItem(KEY_STORAGE);
}

export class ApiError extends Error {
  constructor(status, message, { code = '', retryAfter = null } = {}) {
    super(message);
    this.status = status;  // 0: no HTTP status (network, WebSocket)
    this.code = code;
    this.retryAfter = retryAfter;  // seconds, or null
  }
}

// `sessionId`: sent as X-Session-Id too, so that a load balancer keeps a
// conversation on one replica (deploy/nginx, docs/scaling.md).
function headers(json, sessionId) {
  const h = {};
  if (json) h['Content-Type'] = 'application/json';
  if (sessionId) h['X-Session-Id'] = sessionId;
  const key = getApiKey();
  if (key) h.Authorization = `Bearer ${key}`;
  return h;
}

function retryAfter(response) {
  const value = response.headers.get('Retry-After');
  if (value === null) return null;
  const seconds = Number(value);
  if (Number.isFinite(seconds)) return Math.max(0, Math.ceil(seconds));
  const date = Date.parse(value);
  return Number.isNaN(date) ? null : Math.max(0, Math.ceil((date - Date.now()) / 1000));
}

async function errorFrom(response) {
  let message = `${response.status} ${response.statusText}`;
  let code = '';
  try {
    const body = await response.json();
    message = body.error?.message || message;
    code = body.error?.code || '';
  } catch { /* not JSON: keep the status line */ }
  return new ApiError(response.status, message, { code, retryAfter: retryAfter(response) });
}

async function send(path, { method = 'GET', body, signal } = {}) {
  let response;
  try {
    response = await fetch(path, {
      method, signal, headers: headers(body !== undefined, body?.session_id),
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  } catch (e) {
    if (e.name === 'AbortError') throw e;
    throw new ApiError(0, 'Cannot reach the server.', { code: 'network' });
  }
  if (!response.ok) throw await errorFrom(response);
  return response;
}

export async function api(path, options) {
  return (await send(path, options)).json();
}

// The WebSocket protocol has no status codes; its error codes tell the kind.
function statusOfCode(code) {
  if (/invalid_api_key|unauthorized|authentication/.test(code)) return 401;
  if (/rate_limit/.test(code)) return 429;
  if (/unavailable|overloaded|queue_full|shed/.test(code)) return 503;
  return 0;
}

function retryText(seconds) {
  return seconds === null ? 'in a moment' : `in ${seconds} s`;
}

// What to tell a person about a failed request.
export function kindMessage(error) {
  const status = error.status || statusOfCode(error.code || '');
  if (status === 401) return 'This server needs an API key. Enter it under Settings, then send again.';
  if (status === 429) return `Too many requests for now. Please try again ${retryText(error.retryAfter)}.`;
  if (status === 503) return `The server is busy right now. Please try again ${retryText(error.retryAfter)}.`;
  if (error.code === 'network') return 'Cannot reach the server. Check that it is running, then try again.';
  return `Something went wrong: ${error.message}`;
}

// --- streaming ---

// One answer in flight. `onText(piece)` gets each piece of text; `done`
// resolves with {finishReason, usage} or rejects with an ApiError.
class Stream {
  constructor() {
    this.done = new Promise((resolve, reject) => { this.resolve = resolve; this.reject = reject; });
  }
}

// The page's one WebSocket, opened when first needed and kept open.
class SocketTransport {
  constructor() { this.socket = null; this.current = null; this.seq = 0; }

  url() {
    const base = `${location.protocol === 'https:' ? 'wss' : 'ws'}://${location.host}/v1/ws`;
    const key = getApiKey();
    return key ? `${base}?api_key=${encodeURIComponent(key)}` : base;
  }

  // Resolves with an open socket, or rejects when none opens within 3 s.
  connect() {
    if (this.socket?.readyState === WebSocket.OPEN && this.socketUrl === this.url()) return Promise.resolve(this.socket);
    this.socket?.close();
    return new Promise((resolve, reject) => {
      const socket = new WebSocket(this.url());
      this.socket = socket;
      this.socketUrl = this.url();
      const timer = setTimeout(() => { socket.close(); reject(new Error('timeout')); }, 3000);
      socket.onopen = () => { clearTimeout(timer); resolve(socket); };
      socket.onerror = () => { clearTimeout(timer); reject(new Error('no WebSocket')); };
      socket.onmessage = (event) => this.receive(event.data);
      socket.onclose = () => {
        if (this.socket === socket) this.socket = null;
        this.current?.reject(new ApiError(0, 'The connection closed.', { code: 'network' }));
        this.current = null;
      };
    });
  }

  receive(data) {
    const stream = this.current;
    let message;
    try { message = JSON.parse(data); } catch { return; }
    if (!stream || message.id !== stream.id) return;  // an earlier, cancelled answer
    if (message.error) {
      this.current = null;
      const e = message.error;
      stream.reject(new ApiError(e.status || 0, e.message || 'error', { code: e.code || e.type || '', retryAfter: e.retry_after ?? null }));
    } else if (message.finished) {
      this.current = null;
      stream.resolve({ finishReason: message.finish_reason, usage: message.usage });
    } else if (message.text) {
      stream.onText(message.text);
    }
  }

  start(body, onText) {
    const stream = new Stream();
    stream.id = `web-${++this.seq}`;
    stream.onText = onText;
    stream.cancel = () => this.socket?.send(JSON.stringify({ cancel: true }));
    this.current = stream;
    this.socket.send(JSON.stringify({ ...body, id: stream.id }));
    return stream;
  }
}

// Reads `data:` events from a fetch body.
async function readEvents(response, onEvent) {
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buffer += decoder.decode(value, { stream: true });
    let end;
    while ((end = buffer.indexOf('\n\n')) >= 0) {
      const event = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      const data = event.split('\n').filter((l) => l.startsWith('data: ')).map((l) => l.slice(6)).join('\n');
      if (data && data !== '[DONE]') onEvent(JSON.parse(data));
    }
  }
}

function startSse(body, onText) {
  const stream = new Stream();
  const abort = new AbortController();
  let finishReason = null;
  let usage = null;
  stream.cancel = () => { finishReason = 'cancelled'; abort.abort(); };
  const onEvent = (event) => {
    if (event.error) throw new ApiError(0, event.error.message, { code: event.error.code || '' });
    if (event.usage) usage = event.usage;
    for (const choice of event.choices || []) {
      if (choice.delta?.content) onText(choice.delta.content);
      if (choice.finish_reason) finishReason = choice.finish_reason;
    }
  };
  const request = { ...body, stream: true, stream_options: { include_usage: true } };
  send('/v1/chat/completions', { method: 'POST', body: request, signal: abort.signal })
    .then((response) => readEvents(response, onEvent))
    .then(() => stream.resolve({ finishReason, usage }))
    .catch((e) => (e.name === 'AbortError' ? stream.resolve({ finishReason: 'cancelled', usage }) : stream.reject(e)));
  return stream;
}

const socket = new SocketTransport();
// ?transport=sse in the page's address forces the fallback (tests, proxies).
const forceSse = new URLSearchParams(location.search).get('transport') === 'sse';

// Starts streaming a chat answer for `body` (a /v1/chat/completions request
// without `stream`). Returns {done, cancel(), transport}.
export async function streamChat(body, onText) {
  if (!forceSse) {
    try {
      await socket.connect();
      const stream = socket.start(body, onText);
      stream.transport = 'websocket';
      return stream;
    } catch { /* no WebSocket (a proxy, or a refused upgrade): use SSE */ }
  }
  const stream = startSse(body, onText);
  stream.transport = 'sse';
  return stream;
}
