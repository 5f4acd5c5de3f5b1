// The chat page: conversation list, streamed answers, stop / regenerate /
// copy, settings. Model text only ever reaches the page through
// renderMarkdown (text nodes), never as markup.
import { api, ApiError, getApiKey, setApiKey, kindMessage, streamChat } from './api.js';
import { openConversations } from './conversations.js';
import { renderMarkdown } from './markdown.js';

const $ = (id) => document.getElementById(id);
const SETTINGS_KEY = 'parley.settings';
const SETTINGS = ['system', 'temperature', 'max-tokens'];

const state = {
  contextLength: null, // the served model's max_model_len, once known
  store: null,         // LocalConversations or ServerConversations
  conversation: null,  // the open one; null until the first message of a new chat
  stream: null,        // the answer in flight
  lastText: null,      // the last user message (for Regenerate)
};

// --- notices and settings ---

function notice(text) {
  $('notice').textContent = text || '';
  $('notice').hidden = !text;
}

function loadSettings() {
  let saved = {};
  try { saved = JSON.parse(localStorage.getItem(SETTINGS_KEY)) || {}; } catch { /* defaults */ }
  for (const id of SETTINGS) if (saved[id] !== undefined) $(id).value = saved[id];
  $('api-key').value = getApiKey();
}

function saveSettings() {
  localStorage.setItem(SETTINGS_KEY, JSON.stringify(Object.fromEntries(SETTINGS.map((id) => [id, $(id).value]))));
}

function generationParams() {
  const params = {};
  const temperature = Number($('temperature').value);
  const maxTokens = Number($('max-tokens').value);
  if ($('temperature').value !== '' && temperature >= 0 && temperature <= 2) params.temperature = temperature;
  // Unset: none is sent, and the server answers up to the end of the context. Set: never more
  // than the context, which the server would refuse.
  if (Number.isInteger(maxTokens) && maxTokens > 0)
    params.max_tokens = state.contextLength ? Math.min(maxTokens, state.contextLength) : maxTokens;
  return params;
}

// --- messages ---

function messageNode(role, text) {
  const node = document.createElement('article');
  node.className = `msg ${role}`;
  const content = document.createElement('div');
  content.className = 'content';
  content.append(renderMarkdown(text));
  node.append(content);
  if (role === 'assistant') {
    const footer = document.createElement('div');
    footer.className = 'meta';
    const stats = document.createElement('span');
    stats.className = 'stats';
    const copy = document.createElement('button');
    copy.type = 'button';
    copy.className = 'copy';
    copy.textContent = 'Copy';
    copy.addEventListener('click', () => copyAnswer(node, copy));
    footer.append(stats, copy);
    node.append(footer);
  }
  node.dataset.text = text;
  $('messages').append(node);
  node.scrollIntoView({ block: 'end' });
  return node;
}

async function copyAnswer(node, button) {
  try {
    await navigator.clipboard.writeText(node.dataset.text);
    button.textContent = 'Copied';
  } catch {
    getSelection().selectAllChildren(node.querySelector('.content'));  // the user copies it
    button.textContent = 'Selected';
  }
  setTimeout(() => { button.textContent = 'Copy'; }, 1500);
}

function showMessages(messages) {
  $('messages').replaceChildren();
  for (const m of messages) {
    const node = messageNode(m.role, m.content);
    if (m.role === 'assistant') node.dataset.state = 'done';
  }
  state.lastText = messages.findLast((m) => m.role === 'user')?.content ?? null;
}

function statsText(started, first, end, usage, pieces) {
  const tokens = usage?.completion_tokens ?? pieces;
  const parts = [];
  if (first !== null) parts.push(`TTFT ${Math.round(first - started)} ms`);
  if (first !== null && tokens > 1 && end > first) parts.push(`${((tokens - 1) / ((end - first) / 1000)).toFixed(1)} tok/s`);
  parts.push(`${tokens} tokens`);
  return parts.join(' · ');
}

// --- conversation list ---

async function refreshList() {
  const items = await state.store.list();
  const list = $('conversations');
  list.replaceChildren(...items.map(({ id, title }) => {
    const li = document.createElement('li');
    const open = document.createElement('button');
    open.type = 'button';
    open.className = 'open';
    open.textContent = title;
    open.dataset.id = id;
    if (state.conversation?.id === id) open.setAttribute('aria-current', 'true');
    open.addEventListener('click', () => run(() => selectConversation(id)));
    const remove = document.createElement('button');
    remove.type = 'button';
    remove.className = 'delete';
    remove.textContent = '×';
    remove.setAttribute('aria-label', `Delete “${title}”`);
    remove.addEventListener('click', () => run(() => deleteConversation(id)));
    li.append(open, remove);
    return li;
  }));
}

async function selectConversation(id) {
  if (state.stream) return;
  const conversation = await state.store.get(id);
  if (!conversation) {
    notice('That conversation has expired.');
    return refreshList();
  }
  state.conversation = conversation;
  showMessages(conversation.messages);
  setBusy(false);
  await refreshList();
  $('input').focus();
}

async function deleteConversation(id) {
  await state.store.remove(id);
  if (state.conversation?.id === id) newChat();
  await refreshList();
}

function newChat() {
  if (state.stream) return;
  state.conversation = null;
  state.lastText = null;
  $('messages').replaceChildren();
  notice('');
  setBusy(false);
  refreshList().catch(() => {});
  $('input').focus();
}

// --- asking ---

function setBusy(busy) {
  $('send').disabled = busy;
  $('stop').disabled = !busy;
  $('regenerate').disabled = busy || state.lastText === null;
}

async function send(text) {
  if (state.stream || !text.trim()) return;
  notice('');
  if (!state.store) await connect();
  const system = $('system').value.trim();
  const isNew = !state.conversation;
  if (isNew) state.conversation = await state.store.create(system);
  messageNode('user', text);
  state.lastText = text;
  const body = { ...state.store.request(state.conversation, text, state.conversation.system), ...generationParams() };
  await ask(text, body, messageNode('assistant', ''));
  if (isNew) await refreshList();
}

// Streams the answer into `node`, repainting at most once per frame.
async function ask(text, body, node) {
  const content = node.querySelector('.content');
  const conversation = state.conversation;
  const started = performance.now();
  let first = null;
  let answer = '';
  let pieces = 0;
  let painting = false;
  const paint = () => {
    painting = false;
    content.replaceChildren(renderMarkdown(answer));
    node.dataset.text = answer;
  };
  node.dataset.state = 'streaming';
  setBusy(true);
  try {
    state.stream = await streamChat(body, (piece) => {
      if (first === null) first = performance.now();
      answer += piece;
      pieces++;
      if (!painting) { painting = true; requestAnimationFrame(paint); }
    });
    node.dataset.transport = state.stream.transport;
    const { finishReason, usage } = await state.stream.done;
    paint();
    const stopped = finishReason === 'cancelled';
    node.dataset.state = stopped ? 'stopped' : 'done';
    node.querySelector('.stats').textContent =
      statsText(started, first, performance.now(), usage, pieces) + (stopped ? ' · stopped' : '');
    if (!stopped) await state.store.record(conversation, text, answer);
  } catch (e) {
    paint();
    node.dataset.state = 'error';
    node.querySelector('.stats').textContent = 'not answered';
    showError(e);
  } finally {
    state.stream = null;
    setBusy(false);
  }
}

function stop() {
  state.stream?.cancel();
}

// Asks the last question again (with sessions the earlier answer stays in
// the server's history; locally it is replaced).
async function regenerate() {
  if (state.stream || state.lastText === null) return;
  const text = state.lastText;
  const nodes = [...$('messages').children];
  const lastUser = nodes.findLastIndex((n) => n.classList.contains('user'));
  nodes.slice(lastUser).forEach((n) => n.remove());
  const messages = state.conversation?.messages;
  if (state.store.mode === 'local' && messages?.at(-2)?.content === text) messages.splice(-2, 2);
  await send(text);
}

function showError(e) {
  if (!(e instanceof ApiError)) throw e;
  notice(kindMessage(e));
  if (e.status === 401) {
    $('settings').open = true;
    $('api-key').focus();
  }
}

// Runs an action, turning API errors into notices.
function run(action) {
  Promise.resolve().then(action).catch(showError);
}

// --- start ---

async function connect() {
  const models = await api('/v1/models');
  $('model').textContent = models.data?.[0]?.id ?? 'no model';
  const context = models.data?.[0]?.max_model_len;
  if (Number.isInteger(context) && context > 0) {
    state.contextLength = context;
    $('max-tokens').max = String(context);
    $('max-tokens').placeholder = `the rest of the context (${context})`;
  }
  state.store = await openConversations();
  document.body.dataset.mode = state.store.mode;
  $('mode').textContent = state.store.mode === 'sessions'
    ? 'Conversations are kept by the server.' : 'Conversations are kept in this browser.';
  await refreshList();
}

function wire() {
  $('composer').addEventListener('submit', (event) => {
    event.preventDefault();
    const text = $('input').value;
    if (!text.trim() || state.stream) return;
    $('input').value = '';
    run(() => send(text).catch((e) => {
      if (!$('input').value) $('input').value = text;  // not sent: keep it for the retry
      throw e;
    }));
  });
  $('input').addEventListener('keydown', (event) => {
    if (event.key === 'Enter' && !event.shiftKey && !event.isComposing) {
      event.preventDefault();
      $('composer').requestSubmit();
    }
  });
  document.addEventListener('keydown', (event) => {
    if (event.key === 'Escape' && state.stream) {
      event.preventDefault();
      stop();
    }
  });
  $('stop').addEventListener('click', stop);
  $('regenerate').addEventListener('click', () => run(regenerate));
  $('new-chat').addEventListener('click', newChat);
  for (const id of SETTINGS) $(id).addEventListener('change', saveSettings);
  $('key-form').addEventListener('submit', (event) => {
    event.preventDefault();
    setApiKey($('api-key').value.trim());
    notice('');
    run(connect);
  });
}

loadSettings();
wire();
setBusy(false);
run(connect);
