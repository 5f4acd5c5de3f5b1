// A small Markdown renderer that cannot inject markup: it builds DOM nodes and
// puts every piece of text in with text nodes, so `<script>` or
// `<img onerror=…>` in a model's answer stays visible text. Supported:
// paragraphs, headings, bullet and numbered lists, **strong**, *emphasis*,
// `inline code`, fenced code blocks and [links](https://…) — only http(s)
// links become anchors; anything else (javascript:, data:, relative) is text.

const FENCE = /^\s*(```|~~~)\s*([\w+-]*)\s*$/;
const HEADING = /^(#{1,6})\s+(.*)$/;
const LIST_ITEM = /^\s*(?:([-*+])|(\d{1,9})[.)])\s+(.*)$/;
// Alternatives, leftmost match first: code, strong, emphasis, link.
const INLINE = /`([^`]+)`|\*\*(?=\S)(.+?)\*\*|__(?=\S)(.+?)__|\*(?=[^\s*])(.+?)\*|\b_(?=[^\s_])(.+?)_\b|\[([^\]\n]+)\]\(([^)\s]+)\)/;

function el(tag, ...children) {
  const node = document.createElement(tag);
  node.append(...children);
  return node;
}

export function isSafeUrl(href) {
  if (!/^https?:\/\//i.test(href)) return false;
  try {
    const url = new URL(href);
    return url.protocol === 'http:' || url.protocol === 'https:';
  } catch {
    return false;
  }
}

function link(text, href, source) {
  if (!isSafeUrl(href)) return [document.createTextNode(source)];
  const a = el('a');
  a.href = href;
  a.rel = 'noopener noreferrer nofollow';
  a.target = '_blank';
  appendInline(a, text);
  return [a];
}

function inlineNodes(match) {
  const [source, code, strong1, strong2, em1, em2, linkText, href] = match;
  if (code !== undefined) return [el('code', code)];
  if (strong1 !== undefined || strong2 !== undefined) return [withInline('strong', strong1 ?? strong2)];
  if (em1 !== undefined || em2 !== undefined) return [withInline('em', em1 ?? em2)];
  return link(linkText, href, source);
}

function withInline(tag, text) {
  const node = el(tag);
  appendInline(node, text);
  return node;
}

// Appends `text` with inline formatting to `parent`.
export function appendInline(parent, text) {
  let rest = text;
  for (let m = INLINE.exec(rest); m; m = INLINE.exec(rest)) {
    if (m.index > 0) parent.append(rest.slice(0, m.index));
    parent.append(...inlineNodes(m));
    rest = rest.slice(m.index + m[0].length);
  }
  if (rest) parent.append(rest);
}

// Lines joined with <br>, as chat text is written.
function paragraph(lines) {
  const p = el('p');
  lines.forEach((line, i) => {
    if (i > 0) p.append(el('br'));
    appendInline(p, line);
  });
  return p;
}

function codeBlock(lines, language) {
  const code = el('code', lines.join('\n'));
  if (language) code.dataset.language = language;
  return el('pre', code);
}

// Reads one list starting at lines[i]; returns [node, next index].
function list(lines, i) {
  const ordered = LIST_ITEM.exec(lines[i])[2] !== undefined;
  const node = el(ordered ? 'ol' : 'ul');
  if (ordered) node.start = Number(LIST_ITEM.exec(lines[i])[2]);
  let item = null;
  for (; i < lines.length; i++) {
    const m = LIST_ITEM.exec(lines[i]);
    if (m && (m[2] !== undefined) === ordered) {
      item = el('li');
      appendInline(item, m[3]);
      node.append(item);
    } else if (lines[i].trim() && /^\s+/.test(lines[i]) && item) {  // a continuation line
      item.append(' ');
      appendInline(item, lines[i].trim());
    } else {
      break;
    }
  }
  return [node, i];
}

// Renders `text` into a new DocumentFragment. An unterminated fence (an
// answer still streaming) is shown as a code block so far.
export function renderMarkdown(text) {
  const out = document.createDocumentFragment();
  const lines = String(text).replace(/\r\n?/g, '\n').split('\n');
  let para = [];
  const flush = () => {
    if (para.length) out.append(paragraph(para));
    para = [];
  };
  for (let i = 0; i < lines.length;) {
    const line = lines[i];
    const fence = FENCE.exec(line);
    if (fence) {
      flush();
      const closes = (l) => {
        const f = FENCE.exec(l);
        return f && f[1] === fence[1] && !f[2];
      };
      let end = i + 1;
      while (end < lines.length && !closes(lines[end])) end++;
      out.append(codeBlock(lines.slice(i + 1, end), fence[2]));
      i = end + 1;
    } else if (!line.trim()) {
      flush();
      i++;
    } else if (HEADING.test(line)) {
      flush();
      const [, hashes, title] = HEADING.exec(line);
      out.append(withInline(`h${Math.min(6, hashes.length + 2)}`, title));
      i++;
    } else if (LIST_ITEM.test(line)) {
      flush();
      const [node, next] = list(lines, i);
      out.append(node);
      i = next;
    } else {
      para.push(line);
      i++;
    }
  }
  flush();
  return out;
}
