// The sandbox page: a Telegram group as several people see it at once.
// Everything shown comes from the emulator's state (/_emulator/state and the
// /_emulator/live WebSocket); the race timeline and the clock come from the
// sandbox interface (/_sandbox/) when it is there. Nothing here knows the game.
"use strict";

const LANGUAGES = ["en", "mk", "sw", "es", "ar", "th", "de", "fr", "ru", "he", "fa"];
const state = { bot: null, users: new Map(), chats: new Map(), messages: new Map(), toasts: new Map(), calls: new Map(), flood: true, refusals: 0 };
const CALLS_KEPT = 300; // the log's latest calls, besides every 429 (as many as the state sends)
const KEY_REFUSED = 4403;  // how the live feed closes on a tab that holds another run's key (guard.py)
const panes = new Map();   // user id -> pane
let sandbox = null;        // the sandbox interface's overview, or null without one
let firstState = true;

const $ = (selector, root = document) => root.querySelector(selector);
const el = (tag, props = {}, ...children) => {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(props)) {
    if (key === "class") node.className = value;
    else if (key === "text") node.textContent = value;
    else if (key.startsWith("data-") || key.startsWith("aria-") || key === "dir" || key === "href" || key === "role") node.setAttribute(key, value);
    else node[key] = value;
  }
  for (const child of children) if (child != null) node.append(child);
  return node;
};

// ---- talking to the emulator and the sandbox
// A call the server refused: call() has shown why in the error line, so nothing more is needed
// where no caller catches it (a form, a switch).
class Refusal extends Error {}
window.addEventListener("unhandledrejection", (event) => { if (event.reason instanceof Refusal) event.preventDefault(); });

// A call that never reached the server (it is down, or the network failed) says so too.
async function call(method, path, body) {
  let response;
  try {
    response = await fetch(path, {
      method,
      headers: body === undefined ? {} : { "Content-Type": "application/json" },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  } catch {
    showError(`${method} ${path}: the ${sandbox ? "sandbox" : "emulator"} cannot be reached`);
    throw new Refusal("unreachable");
  }
  const data = await response.json().catch(() => ({ error: `${response.status} ${response.statusText}` }));
  if (!response.ok) {
    showError(`${method} ${path}: ${data.error || response.status}`);
    throw new Refusal(data.error || String(response.status));
  }
  $("#error").hidden = true;
  return data;
}
function showError(text) { const box = $("#error"); box.textContent = text; box.hidden = false; }

// The first load set the key's cookie; the address bar (and what a screenshot or a shared
// link shows) need not keep the key itself.
function forgetKeyInAddress() {
  const address = new URL(location.href);
  if (!address.searchParams.has("k")) return;
  address.searchParams.delete("k");
  history.replaceState(history.state, "", address.pathname + address.search + address.hash);
}

let live = false; // the live feed is open: the server is up, and this page holds its key
function connect() {
  const socket = new WebSocket(`${location.protocol === "https:" ? "wss" : "ws"}://${location.host}/_emulator/live`);
  socket.onopen = () => { live = true; $("#status").textContent = "live"; };
  socket.onmessage = (event) => apply(JSON.parse(event.data));
  socket.onclose = (event) => {
    live = false;
    clearTimeout(racesTimer); // nothing to ask a server that is gone, or that refuses this page
    if (event.code === KEY_REFUSED) { // restarted with a new key: the page's address has changed
      $("#status").textContent = `the ${sandbox ? "sandbox" : "emulator"} restarted: open the address it printed`;
      return;
    }
    $("#status").textContent = "disconnected: reconnecting…";
    setTimeout(connect, 1000);
  };
}

function apply(update) {
  const first = update.type === "state";
  if (first) { for (const map of [state.users, state.chats, state.messages, state.toasts, state.calls]) map.clear(); }
  state.bot = update.bot;
  state.flood = update.flood_limits;
  state.refusals = update.flood_refusals;
  $("#flood-switch").checked = state.flood;
  const newcomers = update.users.filter((user) => !state.users.has(user.id));
  const renamed = !first && update.users.some((user) => state.users.has(user.id) && fullName(state.users.get(user.id)) !== fullName(user));
  for (const user of update.users) state.users.set(user.id, user);
  if (!first && (newcomers.length || renamed) && sandbox) refreshSandbox(); // a robot added elsewhere, or the hint's names
  for (const chat of update.chats) state.chats.set(chat.id, chat);
  const touched = new Set();
  for (const message of update.messages) { state.messages.set(message.key, message); touched.add(message.chat_id); }
  for (const call of update.calls) state.calls.set(call.sequence, call);
  forgetOldCalls();
  const fresh = [];
  for (const toast of update.toasts) {
    const before = state.toasts.get(toast.callback_query_id);
    state.toasts.set(toast.callback_query_id, toast);
    if (!first && !firstState && toast.answered && !(before && before.answered)) fresh.push(toast);
  }
  if (first) firstState = false;
  syncPanes();
  for (const pane of panes.values()) {
    if (renamed) pane.redraw();
    else pane.render(first ? null : touched);
  }
  for (const toast of fresh) panes.get(toast.user_id)?.toast(toast);
  renderLog();
  renderRaceChats();
  // A call told to its caller alone (too slow, too late) changes the race but no message.
  const raced = [...touched, ...fresh.map((toast) => toast.chat_id)];
  if (first || raced.some((chatId) => String(chatId) === $("#races-chat").value.split(":")[0])) scheduleRaces();
}

// ---- people
function people() { return [...state.users.values()].filter((user) => !user.is_bot); }
function fullName(user) { return user ? [user.first_name, user.last_name].filter(Boolean).join(" ") : "?"; }
function isRobot(userId) { return Boolean(sandbox && sandbox.robots.some((robot) => robot.user_id === userId)); }

function syncPanes() {
  const container = $("#panes");
  for (const user of people()) {
    if (!panes.has(user.id)) {
      const pane = new Pane(user.id);
      panes.set(user.id, pane);
      container.append(pane.node);
    }
    panes.get(user.id).update(user);
  }
}

// The chats a user sees: groups (a forum: one tab per topic) and their private chat with the bot.
function placesOf(userId) {
  const places = [];
  for (const chat of state.chats.values()) {
    const role = chat.members[String(userId)];
    if (!role || role === "left" || role === "kicked") continue;
    if (chat.type === "private") {
      if (chat.private_user_id === userId) places.push({ chat, thread: null, label: state.bot ? fullName(state.bot) : "Bot", title: `private chat with @${state.bot?.username}` });
    } else if (chat.is_forum) {
      for (const topic of chat.topics) places.push({ chat, thread: topic.message_thread_id, label: `${chat.title} › ${topic.name}`, title: `${chat.title}, topic ${topic.name}` });
    } else {
      places.push({ chat, thread: null, label: chat.title, title: `${chat.title} (${Object.values(chat.members).filter((r) => r !== "left").length} members)` });
    }
  }
  return places.sort((a, b) => (a.chat.type === "private") - (b.chat.type === "private"));
}
const placeKey = (place) => `${place.chat.id}:${place.thread ?? ""}`;

class Pane {
  constructor(userId) {
    this.userId = userId;
    this.node = $("#pane-template").content.firstElementChild.cloneNode(true);
    this.node.dataset.userId = userId;
    this.place = null;
    this.replyTo = null;
    this.shown = new Map(); // message key -> element
    this.commands = [];
    this.shownCommands = []; // the menu's items, in order
    // At the bottom, the pane stays there: as messages come, and as they grow (a picture
    // loading, a font arriving, an edit). Only a scroll of the person's own changes that.
    this.following = true;
    this.ownScrollTop = null;
    this.growing = new ResizeObserver(() => this.follow());
    const head = this.node;
    const box = $(".messages", head);
    box.addEventListener("scroll", () => {
      if (box.scrollTop === this.ownScrollTop) return;
      this.following = box.scrollHeight - box.scrollTop - box.clientHeight < 40;
    });
    const language = $(".language", head);
    for (const code of LANGUAGES) language.append(el("option", { value: code, text: code }));
    $(".name", head).addEventListener("change", (event) => this.rename(event.target.value));
    language.addEventListener("change", (event) => this.patch({ language_code: event.target.value }).then(() => this.loadCommands()));
    $(".admin", head).addEventListener("change", (event) => this.setAdmin(event.target.checked));
    for (const input of [$(".delay", head), $(".jitter", head)]) input.addEventListener("change", () => this.setNetwork());
    $(".composer", head).addEventListener("submit", (event) => { event.preventDefault(); this.send(); });
    const text = $(".text", head);
    text.addEventListener("input", () => this.showMenu());
    text.addEventListener("focus", () => this.loadCommands());
    text.addEventListener("keydown", (event) => this.menuKey(event));
    $(".replying button", head).addEventListener("click", () => this.setReply(null));
    $(".alert button", head).addEventListener("click", () => { $(".alert", head).hidden = true; });
  }

  get user() { return state.users.get(this.userId); }

  update(user) {
    const name = $(".name", this.node);
    if (document.activeElement !== name) name.value = fullName(user);
    $(".language", this.node).value = user.language_code || "en";
    $(".robot-badge", this.node).hidden = !isRobot(user.id);
    const network = $(".network", this.node);
    const slow = user.network && user.network.delay_ms > 0;
    network.classList.toggle("slow", Boolean(slow));
    $("summary", network).textContent = slow ? `network +${user.network.delay_ms} ± ${user.network.jitter_ms} ms` : "network";
    if (document.activeElement?.closest(".network") !== network) {
      $(".delay", network).value = user.network?.delay_ms ?? 0;
      $(".jitter", network).value = user.network?.jitter_ms ?? 0;
    }
    this.renderTabs();
  }

  renderTabs() {
    const places = placesOf(this.userId);
    if (!this.place || !places.some((p) => placeKey(p) === placeKey(this.place))) {
      const chosen = places.find((p) => placeKey(p) === this.chosenPlace());
      this.select(chosen || places[0] || null, false);
    }
    else this.place = places.find((p) => placeKey(p) === placeKey(this.place));
    const tabs = $(".tabs", this.node);
    tabs.replaceChildren(...places.map((place) => {
      const button = el("button", { type: "button", role: "tab", text: place.label, title: place.label, "aria-selected": String(this.place && placeKey(place) === placeKey(this.place)), "data-place": placeKey(place) });
      button.addEventListener("click", () => this.select(place, true));
      return button;
    }));
    const chat = this.place?.chat;
    const role = chat ? chat.members[String(this.userId)] : null;
    const admin = $(".admin", this.node);
    admin.checked = role === "administrator" || role === "creator";
    admin.disabled = !chat || chat.type === "private" || role === "creator";
    $(".admin-label", this.node).title = role === "creator" ? "the creator is always an admin" : "an admin of this chat";
    $(".chat-title", this.node).textContent = this.place ? this.place.title : "no chat";
  }

  // The chat a person picked stays picked across a reload of the page (this browser tab only).
  chosenPlace() {
    try { return sessionStorage.getItem(`place:${this.userId}`); } catch { return null; }
  }
  remember(place) {
    try { sessionStorage.setItem(`place:${this.userId}`, placeKey(place)); } catch { /* storage off: nothing kept */ }
  }

  select(place, render) {
    if (render && place) this.remember(place);
    this.place = place;
    this.following = true;
    this.shown.clear();
    this.growing.disconnect();
    $(".messages", this.node).replaceChildren();
    this.setReply(null);
    this.commands = [];
    if (render) { this.renderTabs(); this.render(null); this.loadCommands(); }
  }

  redraw() {
    this.shown.clear();
    this.growing.disconnect();
    $(".messages", this.node).replaceChildren();
    this.render(null);
  }

  inPlace(message) {
    const place = this.place;
    if (!place || message.chat_id !== place.chat.id) return false;
    if (place.chat.is_forum) return message.message_thread_id === place.thread;
    return true;
  }

  render(touched) {
    if (!this.place) return;
    if (touched && !touched.has(this.place.chat.id)) return;
    const box = $(".messages", this.node);
    for (const message of state.messages.values()) {
      if (!this.inPlace(message)) continue;
      const shown = this.shown.get(message.key);
      if (message.deleted) { if (shown) { this.growing.unobserve(shown.node); shown.node.remove(); this.shown.delete(message.key); } continue; }
      const stamp = `${message.edits}:${message.pinned}:${message.reply_to ? 1 : 0}`;
      if (shown && shown.stamp === stamp) continue;
      const node = renderMessage(message, this);
      if (shown) { this.growing.unobserve(shown.node); shown.node.replaceWith(node); }
      else box.append(node);
      this.growing.observe(node);
      this.shown.set(message.key, { node, stamp });
    }
    this.showHint();
    this.follow();
  }

  follow() {
    if (!this.following) return;
    const box = $(".messages", this.node);
    box.scrollTop = box.scrollHeight;
    this.ownScrollTop = box.scrollTop;
  }

  // A group with no messages yet (a topic's service line is not one): what to do first,
  // as the sandbox words it.
  showHint() {
    const box = $(".messages", this.node);
    const hint = $(".hint", box);
    const wanted = sandbox?.hint && this.place.chat.type !== "private" && !$(".message", box);
    if (!wanted) { hint?.remove(); return; }
    if (hint) hint.textContent = sandbox.hint;
    else box.append(el("p", { class: "hint", text: sandbox.hint, dir: "auto" }));
  }

  toast(toast) {
    if (!toast.text) return;
    if (toast.show_alert) {
      const alert = $(".alert", this.node);
      $("p", alert).textContent = toast.text;
      alert.setAttribute("dir", "auto");
      alert.hidden = false;
      return;
    }
    const node = el("div", { class: "toast", text: toast.text, dir: "auto" });
    $(".toasts", this.node).append(node);
    setTimeout(() => node.remove(), 3300);
  }

  async press(message, button) {
    await call("POST", "/_emulator/presses", { presses: [{ chat_id: message.chat_id, message_id: message.message_id, user_id: this.userId, data: button.callback_data }] });
  }

  async send() {
    const input = $(".text", this.node);
    const text = input.value.trim();
    if (!text || !this.place) return;
    const body = { user_id: this.userId, text };
    if (this.place.thread != null) body.message_thread_id = this.place.thread;
    if (this.replyTo) body.reply_to_message_id = this.replyTo.message_id;
    input.value = "";
    this.setReply(null);
    $(".command-menu", this.node).hidden = true;
    try {
      await call("POST", `/_emulator/chats/${this.place.chat.id}/messages`, body);
    } catch (error) {
      if (!input.value) input.value = text; // give it back to correct and resend
    }
  }

  setReply(message) {
    this.replyTo = message;
    const box = $(".replying", this.node);
    box.hidden = !message;
    if (message) $("span", box).textContent = `replying to ${fullName(state.users.get(message.sender_id))}: ${message.text.slice(0, 60)}`;
  }

  async loadCommands() {
    if (!this.place) return;
    this.commands = await call("GET", `/_emulator/commands?chat_id=${this.place.chat.id}&user_id=${this.userId}`);
    this.showMenu();
  }

  showMenu() {
    const input = $(".text", this.node);
    const menu = $(".command-menu", this.node);
    const typed = input.value;
    if (!typed.startsWith("/") || typed.includes(" ")) { menu.hidden = true; return; }
    const matching = this.commands.filter((command) => `/${command.command}`.startsWith(typed));
    this.shownCommands = matching;
    menu.replaceChildren(...matching.map((command) => {
      const item = el("li", { dir: "auto" }, el("b", { text: `/${command.command}` }), command.description);
      item.addEventListener("mousedown", (event) => { event.preventDefault(); this.pickCommand(command); });
      return item;
    }));
    menu.hidden = matching.length === 0;
  }

  // In the open menu: ArrowDown and ArrowUp move the highlight, Enter picks the highlighted
  // command, Tab that one or the first, Escape closes the menu.
  menuKey(event) {
    const menu = $(".command-menu", this.node);
    if (menu.hidden) return;
    const items = [...menu.children];
    const active = items.findIndex((item) => item.classList.contains("active"));
    if (event.key === "Escape") {
      menu.hidden = true;
    } else if (event.key === "ArrowDown" || event.key === "ArrowUp") {
      event.preventDefault();
      const last = items.length - 1;
      const next = event.key === "ArrowDown" ? (active === last ? 0 : active + 1) : (active <= 0 ? last : active - 1);
      items.forEach((item, at) => item.classList.toggle("active", at === next));
      items[next].scrollIntoView({ block: "nearest" });
    } else if ((event.key === "Enter" && active >= 0) || event.key === "Tab") {
      event.preventDefault();
      this.pickCommand(this.shownCommands[Math.max(active, 0)]);
    }
  }

  pickCommand(command) {
    const input = $(".text", this.node);
    input.value = `/${command.command} `;
    $(".command-menu", this.node).hidden = true;
    input.focus();
  }

  // A name is 1-64 characters, counted as the server counts them (code points, not UTF-16 units).
  async rename(typed) {
    const name = typed.trim();
    const field = $(".name", this.node);
    const length = [...name].length;
    if (length < 1 || length > 64) {
      showError(`a name is 1-64 characters, not ${length}`);
      field.value = fullName(this.user);
      return;
    }
    const [first, ...rest] = name.split(" ");
    await this.patch({ first_name: first, last_name: rest.join(" ") }).catch(() => { field.value = fullName(this.user); });
  }
  patch(fields) { return call("PATCH", `/_emulator/users/${this.userId}`, fields); }
  async setAdmin(admin) {
    if (!this.place) return;
    await call("PUT", `/_emulator/chats/${this.place.chat.id}/members/${this.userId}`, { role: admin ? "administrator" : "member" });
    this.loadCommands();
  }
  async setNetwork() {
    const delay = Number($(".delay", this.node).value) || 0;
    const jitter = Math.min(Number($(".jitter", this.node).value) || 0, delay);
    await call("PUT", `/_emulator/users/${this.userId}/network`, { delay_ms: delay, jitter_ms: jitter });
  }
}

// ---- the sandbox side: clock, robots, races
async function loadSandbox() {
  try {
    const response = await fetch("/_sandbox/");
    if (!response.ok) return;
    sandbox = await response.json();
  } catch { return; }
  $("#clock-controls").hidden = false;
  $("#add-robot").hidden = false;
  $("#races-box").hidden = false;
  document.head.append(el("link", { rel: "stylesheet", href: "/_sandbox/fonts.css" }));
  showClock();
  for (const pane of panes.values()) pane.update(pane.user);
}
async function refreshSandbox() {
  const response = await fetch("/_sandbox/");
  if (!response.ok) return;
  sandbox = await response.json();
  showClock();
  for (const pane of panes.values()) { pane.update(pane.user); if (pane.place) pane.showHint(); }
}
function showClock() {
  const minutes = Math.round(sandbox.clock.skipped_seconds / 60);
  $("#clock-skipped").textContent = minutes >= 60 ? `+${Math.floor(minutes / 60)} h ${minutes % 60} min` : `+${minutes} min`;
  $("#clock-skipped").title = `the bot's clock: ${sandbox.clock.now}`;
}

function renderRaceChats() {
  const select = $("#races-chat");
  const chosen = select.value;
  const options = [];
  for (const chat of state.chats.values()) {
    if (chat.type === "private") continue;
    if (chat.is_forum) for (const topic of chat.topics) options.push([`${chat.id}:${topic.message_thread_id}`, `${chat.title} › ${topic.name}`]);
    else options.push([`${chat.id}:`, chat.title]);
  }
  const signature = options.map((o) => o.join("=")).join("|");
  if (select.dataset.signature === signature) return;
  select.dataset.signature = signature;
  select.replaceChildren(...options.map(([value, label]) => el("option", { value, text: label })));
  if (options.some(([value]) => value === chosen)) select.value = chosen;
}

let racesTimer = null;
function scheduleRaces() {
  if (!sandbox) return;
  clearTimeout(racesTimer);
  racesTimer = setTimeout(loadRaces, 120);
}
async function loadRaces() {
  const [chatId, thread] = $("#races-chat").value.split(":");
  if (!chatId || !live) return;
  const races = await call("GET", `/_sandbox/races?chat_id=${chatId}${thread ? `&message_thread_id=${thread}` : ""}`);
  $("#races").replaceChildren(...races.reverse().map(renderRace));
}

// ---- the bar's controls
// A form whose submit adds someone: its button is off while the call runs, so a double-click adds one.
function onSubmitOnce(form, action) {
  const button = form.querySelector("button[type=submit]");
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    if (button.disabled) return;
    button.disabled = true;
    try { await action(form); } finally { button.disabled = false; }
  });
}
function setUpBar() {
  for (const button of document.querySelectorAll("[data-skip]")) {
    button.addEventListener("click", async () => {
      sandbox = await call("POST", "/_sandbox/clock/skip", { seconds: Number(button.dataset.skip) });
      showClock();
    });
  }
  $("#flood-switch").addEventListener("change", (event) => call("PUT", "/_emulator/flood", { enabled: event.target.checked }));
  const language = $("#add-person select");
  for (const code of LANGUAGES) language.append(el("option", { value: code, text: code }));
  onSubmitOnce($("#add-person"), async (element) => {
    const form = new FormData(element);
    if (sandbox) await call("POST", "/_sandbox/people", Object.fromEntries(form));
    else await addPersonToEmulator(form.get("first_name"), form.get("language_code"));
    element.reset();
  });
  onSubmitOnce($("#add-robot"), async (element) => {
    const form = Object.fromEntries(new FormData(element));
    const robot = await call("POST", "/_sandbox/robots", { first_name: form.first_name, reaction_ms: Number(form.reaction_ms), jitter_ms: Number(form.jitter_ms), wrong_rate: Number(form.wrong_rate) });
    sandbox.robots.push(robot);
    panes.get(robot.user_id)?.update(state.users.get(robot.user_id));
  });
  $("#races-chat").addEventListener("change", loadRaces);
}

// Without the sandbox (a plain `telesnap emulator`): a user, a member of every group, with a private chat.
async function addPersonToEmulator(firstName, languageCode) {
  const user = await call("POST", "/_emulator/users", { first_name: firstName, language_code: languageCode });
  for (const chat of state.chats.values()) {
    if (chat.type !== "private") await call("PUT", `/_emulator/chats/${chat.id}/members/${user.id}`, { role: "member" });
  }
  await call("POST", "/_emulator/chats", { type: "private", member_ids: [user.id] });
}

forgetKeyInAddress();
setUpBar();
loadSandbox().then(connect);
