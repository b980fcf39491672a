// How the sandbox page draws what it is sent: messages (text and entities as
// DOM, never as HTML), keyboards, files, the log of Bot API calls and the race
// timeline. Loaded before sandbox.js, which holds the state and the panes.
"use strict";

// ---- messages: text and entities to DOM (never as HTML), keyboards, files, replies
function renderMessage(message, pane) {
  // A topic's first message is Telegram's service line, not a bubble of its creator's.
  if (message.kind === "forum_topic_created") {
    return el("div", { class: "service", "data-key": message.key, "data-message-id": message.message_id, text: `Topic “${message.text}” created`, dir: "auto" });
  }
  const mine = message.sender_id === pane.userId;
  const node = el("div", { class: `message${mine ? " mine" : ""}`, "data-key": message.key, "data-message-id": message.message_id });
  if (!mine) node.append(el("div", { class: "sender", text: fullName(state.users.get(message.sender_id)), dir: "auto" }));
  if (message.reply_to) {
    node.append(el("div", { class: "quote", dir: "auto" }, el("b", { text: fullName(state.users.get(message.reply_to.sender_id)) }), message.reply_to.text));
  }
  if (message.file) {
    if ((message.kind === "photo" || message.kind === "animation") && message.file.url) {
      // A pane draws a picture small: as in Telegram, a click opens it whole.
      node.append(el("a", { class: "picture", href: message.file.url, target: "_blank", rel: "noopener", title: "Open the whole picture" }, el("img", { src: message.file.url, alt: message.kind })));
    }
    else if (message.file.url) node.append(el("a", { class: "document", href: message.file.url, download: message.file.file_name || "file", text: `📄 ${message.file.file_name || "file"} (${formatSize(message.file.file_size)})` }));
    else node.append(el("div", { class: "document", text: `📎 ${message.kind} (not kept)` }));
  }
  if (message.text) node.append(renderText(message.text, message.entities));
  const keyboard = message.reply_markup?.inline_keyboard;
  if (keyboard && keyboard.length) {
    const board = el("div", { class: "keyboard" });
    for (const row of keyboard) {
      const line = el("div", { class: "row" });
      for (const button of row) {
        if (button.url) { line.append(el("a", { href: button.url, target: "_blank", rel: "noopener", text: button.text, dir: "auto" })); continue; }
        const item = el("button", { type: "button", text: button.text, dir: "auto" });
        item.addEventListener("click", () => pane.press(message, button));
        line.append(item);
      }
      board.append(line);
    }
    node.append(board);
  }
  const time = new Date(message.date * 1000).toLocaleTimeString([], { hour: "2-digit", minute: "2-digit" });
  const reply = el("button", { type: "button", text: "reply", title: "reply to this message" });
  reply.addEventListener("click", () => pane.setReply(message));
  node.append(el("div", { class: "meta" }, reply, message.pinned ? "📌 " : "", message.edits ? "edited " : "", time));
  return node;
}

function formatSize(bytes) {
  if (bytes == null) return "?";
  return bytes < 1024 ? `${bytes} B` : `${(bytes / 1024).toFixed(1)} KB`;
}

const ENTITY_TAGS = { bold: "b", italic: "i", underline: "u", strikethrough: "s", code: "code", pre: "pre", spoiler: "span", blockquote: "blockquote", expandable_blockquote: "blockquote" };

// Offsets are UTF-16 code units, as JavaScript strings count them.
function renderText(text, entities) {
  const body = el("div", { class: "body", dir: "auto" });
  const sorted = [...(entities || [])].sort((a, b) => a.offset - b.offset || b.length - a.length);
  appendRange(body, text, sorted, 0, text.length);
  return body;
}

function appendRange(parent, text, entities, start, end) {
  let position = start;
  let index = 0;
  while (index < entities.length) {
    const entity = entities[index];
    if (entity.offset < position || entity.offset >= end) { index += 1; continue; }
    if (entity.offset > position) parent.append(text.slice(position, entity.offset));
    const stop = Math.min(entity.offset + entity.length, end);
    const inner = entities.filter((other, at) => at > index && other.offset >= entity.offset && other.offset + other.length <= stop);
    const node = entityNode(entity, text.slice(entity.offset, stop));
    appendRange(node, text, inner, entity.offset, stop);
    parent.append(node);
    position = stop;
    index += 1;
  }
  if (position < end) parent.append(text.slice(position, end));
}

function entityNode(entity, content) {
  if (entity.type === "text_link" || entity.type === "url") {
    const href = entity.type === "url" ? content : entity.url;
    if (/^tg:\/\/user\?id=/.test(href || "")) return el("span", { class: "mention", title: href });
    if (/^https?:\/\//.test(href || "")) return el("a", { href, target: "_blank", rel: "noopener noreferrer" });
    return el("span", { class: "mention" });
  }
  if (entity.type === "mention" || entity.type === "text_mention" || entity.type === "bot_command" || entity.type === "hashtag") return el("span", { class: "mention" });
  const tag = ENTITY_TAGS[entity.type] || "span";
  return el(tag, entity.type === "spoiler" ? { class: "spoiler" } : {});
}

// ---- the log of Bot API calls: the latest, and every 429 (Map keeps them in arrival order)
function forgetOldCalls() {
  let excess = state.calls.size - CALLS_KEPT;
  for (const [sequence, call] of state.calls) {
    if (excess <= 0) break;
    if (call.status !== 429) { state.calls.delete(sequence); excess -= 1; }
  }
}
function renderLog() {
  const calls = [...state.calls.values()].sort((a, b) => b.sequence - a.sequence);
  $("#flood-count").textContent = state.refusals ? `${state.refusals} × 429` : "";
  $("#log").replaceChildren(...calls.map((c) => el("li", {
    class: c.status === 429 ? "flood" : c.status && c.status !== 200 ? "failed" : "",
    title: c.description || "",
    "data-method": c.method,
  }, el("span", { text: c.method }), el("span", { text: c.status ?? "…" }), el("span", { text: c.ms == null ? "" : `${c.ms} ms` }))));
}

// ---- the race timeline: calls placed by their offset, the tie window shaded; the sandbox words the summary
function renderRace(race) {
  const latest = Math.max(...race.calls.map((c) => c.offset_ms), 0);
  const span = Math.max(race.tie_window_ms * 1.5, latest * 1.15, 50);
  const percent = (ms) => `${Math.min(100, (ms / span) * 100)}%`;
  const lane = el("div", { class: "lane" });
  lane.append(el("div", { class: "window", style: `left:0;width:${percent(race.tie_window_ms)}`, title: `tie window ${race.tie_window_ms} ms` }));
  for (const c of race.calls) {
    const row = el("div", { class: `call ${c.verdict}` }, el("span", { class: "dot", style: `left:${percent(c.offset_ms)}` }));
    // Past the middle a label ends at its dot, so it stays inside the lane.
    const side = c.offset_ms / span > 0.5 ? `right:calc(100% - ${percent(c.offset_ms)});padding-right:6px` : `left:${percent(c.offset_ms)};padding-left:4px`;
    row.append(el("span", { class: "label", dir: "auto", style: side, text: `${c.name} +${c.offset_ms.toFixed(1)} ms ${c.verdict.replace("_", " ")}` }));
    lane.append(row);
  }
  return el("div", { class: `race ${race.outcome}`, "data-outcome": race.outcome },
    el("div", { class: "outcome", text: race.summary, dir: "auto" }),
    lane,
    el("div", { class: "scale" }, el("span", { text: "0 ms" }), el("span", { text: `tie window ${race.tie_window_ms} ms` }), el("span", { text: `${Math.round(span)} ms` })));
}

