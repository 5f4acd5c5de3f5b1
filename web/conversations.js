// Where conversations live. With the server's sessions API (POST /v1/sessions)
// the server keeps the history and each request sends only the new message;
// without it (a 404) the page keeps conversations in localStorage and sends
// the whole conversation each time.
import { api, ApiError } from './api.js';

const LOCAL_KEY = 'parley.conversations';
const TITLES_KEY = 'parley.titles';
const USER_KEY = 'parley.user';

function loadJson(key, fallback) {
  try { return JSON.parse(localStorage.getItem(key)) ?? fallback; } catch { return fallback; }
}
const saveJson = (key, value) => localStorage.setItem(key, JSON.stringify(value));

// This browser's anonymous user id: its conversations are listed with it.
function userId() {
  let id = localStorage.getItem(USER_KEY);
  if (!id) {
    id = `web-${crypto.randomUUID()}`;
    localStorage.setItem(USER_KEY, id);
  }
  return id;
}

// C0 controls other than tab, line feed and carriage return, and DEL.
const CONTROLS = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/g;
const titleOf = (text) => text.replace(/\s+/g, ' ').trim().slice(0, 60) || 'New chat';

// A conversation: {id, title, system, messages: [{role, content}]}.
class LocalConversations {
  constructor() { this.mode = 'local'; }
  all() { return loadJson(LOCAL_KEY, []); }
  save(list) { saveJson(LOCAL_KEY, list); }

  async list() { return this.all().map(({ id, title }) => ({ id, title })); }
  async create(system) {
    const conversation = { id: `local-${crypto.randomUUID()}`, title: 'New chat', system, messages: [] };
    this.save([conversation, ...this.all()]);
    return conversation;
  }
  async get(id) { return this.all().find((c) => c.id === id) ?? null; }
  async remove(id) { this.save(this.all().filter((c) => c.id !== id)); }

  request(conversation, text, system) {
    // An answer may hold control characters the model produced, which the
    // server refuses in requests; they are invisible, so they are dropped.
    const messages = conversation.messages.map(({ role, content }) =>
      ({ role, content: role === 'assistant' ? content.replace(CONTROLS, '') : content }));
    if (system) messages.unshift({ role: 'system', content: system });
    return { messages: [...messages, { role: 'user', content: text }] };
  }
  // Called after an answer finished (stop or length).
  async record(conversation, text, answer) {
    conversation.messages.push({ role: 'user', content: text }, { role: 'assistant', content: answer });
    if (conversation.title === 'New chat') conversation.title = titleOf(text);
    this.save(this.all().map((c) => (c.id === conversation.id ? conversation : c)));
  }
}

class ServerConversations {
  constructor() { this.mode = 'sessions'; this.titles = loadJson(TITLES_KEY, {}); }

  title(session) {
    const first = session.turns?.[0]?.user;
    return this.titles[session.id] || (first ? titleOf(first) : 'New chat');
  }
  async list() {
    const page = await api(`/v1/sessions?user=${encodeURIComponent(userId())}&limit=50`);
    return page.data.map((s) => ({ id: s.id, title: this.title(s) }));
  }
  async create(system) {
    const body = { user: userId() };
    if (system) body.system_prompt = system;
    const session = await api('/v1/sessions', { method: 'POST', body });
    return { id: session.id, title: 'New chat', system, messages: [] };
  }
  async get(id) {
    let session;
    try {
      session = await api(`/v1/sessions/${encodeURIComponent(id)}`);
    } catch (e) {
      if (e instanceof ApiError && e.status === 404) return null;  // expired or deleted
      throw e;
    }
    const messages = (session.turns || []).flatMap((t) => [
      { role: 'user', content: t.user }, { role: 'assistant', content: t.assistant }]);
    return { id, title: this.title(session), system: session.system_prompt || '', messages };
  }
  async remove(id) {
    await api(`/v1/sessions/${encodeURIComponent(id)}`, { method: 'DELETE' });
    delete this.titles[id];
    saveJson(TITLES_KEY, this.titles);
  }

  // The server adds the stored history and system prompt.
  request(conversation, text) {
    return { session_id: conversation.id, messages: [{ role: 'user', content: text }] };
  }
  async record(conversation, text, answer) {
    conversation.messages.push({ role: 'user', content: text }, { role: 'assistant', content: answer });
    if (!this.titles[conversation.id]) {
      this.titles[conversation.id] = conversation.title = titleOf(text);
      saveJson(TITLES_KEY, this.titles);
    }
  }
}

// Sessions when the server has them (listing answers), else local.
export async function openConversations() {
  const server = new ServerConversations();
  try {
    await server.list();
    return server;
  } catch (e) {
    if (e instanceof ApiError && (e.status === 404 || e.status === 405)) return new LocalConversations();
    throw e;
  }
}
