// The console's list of messages, its alerts (replies, help, escalations) and the receipts panel.
"use strict";
import { $, S, api, clock, el, errorText, own, ownList } from "./console-core.js";

// ---- rendering --------------------------------------------------------------------------
export function renderMessages() {
  const list = $("messages");
  const items = Array.from(S.messages.values()).sort((a, b) => b.seq - a.seq).slice(0, 200);
  // The list is redrawn on every frame: a focused "Receipts" button is found again after.
  const a = document.activeElement, focusId = a && a.dataset && a.dataset.open;
  list.textContent = "";
  $("no-messages").hidden = items.length > 0;
  for (const m of items) list.appendChild(messageItem(m));
  if (focusId) { const b = list.querySelector('button[data-open="' + focusId + '"]'); if (b) b.focus(); }
}

const audienceParts = (m) => Array.isArray(m.teams) && m.teams.length ? ["to ", ...ownList(m.teams)] : ["to the whole event"];
// An element of `parts` (text and elements, see `own`).
const line = (tag, cls, parts) => { const e = el(tag, cls); e.append(...parts); return e; };
export const pollOptions = (m) => (m.poll && Array.isArray(m.poll.options) ? m.poll.options : null);

// "Yes 3 · No 1 — 4 of 9 answered" with a bar per option, from the latest poll_tally.
function pollBlock(m) {
  const opts = pollOptions(m), t = S.tallies.get(m.id);
  const ul = el("ul", "poll");
  ul.setAttribute("aria-label", "Answers");
  const total = t ? t.counts.reduce((x, y) => x + y, 0) : 0;
  opts.forEach((o, i) => {
    const n = t ? (t.counts[i] || 0) : 0;
    const li = el("li", m.poll && m.poll.options.length === 2 && o === "I need help" && n > 0 ? "help" : null);
    const opt = el("span", "opt", o); opt.dir = "auto"; li.appendChild(opt);
    li.appendChild(el("span", "n", String(n)));
    const meter = el("span", "opt-meter"); const fill = el("span"); fill.style.width = (total ? Math.round(100 * n / total) : 0) + "%";
    meter.appendChild(fill); li.appendChild(meter);
    li.dataset.count = String(n);
    ul.appendChild(li);
  });
  const wrap = el("div", "poll-wrap");
  wrap.appendChild(ul);
  wrap.appendChild(el("div", "readers", t ? t.answered + " of " + t.audience + " answered" : "no answers yet"));
  return wrap;
}

function messageItem(m) {
  const li = el("li", (m.fresh ? "fresh " : "") + (m.retracted ? "retracted" : ""));
  li.dataset.id = m.id; m.fresh = false;
  const meta = el("div", "meta");
  meta.appendChild(el("span", "badge " + m.priority, m.priority));
  meta.appendChild(el("span", "badge type", m.message_type));
  meta.appendChild(line("span", null, [own(m.sender_name), " · " + clock(m.sent_at)]));
  if (m.expires_at) meta.appendChild(el("span", null, "expires " + clock(m.expires_at)));
  if (m.edited_at) meta.appendChild(el("span", null, "edited"));
  if (m.retracted) meta.appendChild(el("span", null, "retracted"));
  meta.appendChild(line("span", "to-line" + (Array.isArray(m.teams) && m.teams.length ? " some" : ""), audienceParts(m)));
  li.appendChild(meta);
  const text = el("p", "text", m.message);
  text.dir = "auto"; // the sender's language: Hebrew or Arabic reads right to left
  li.appendChild(text);
  if (pollOptions(m)) li.appendChild(pollBlock(m));
  const r = S.receipts.get(m.id);
  const targeted = Array.isArray(m.teams) && m.teams.length > 0; // its audience is known from receipts only
  // r.read and r.unread hold a few names (receipts?limit=); readCount and unreadCount count everyone.
  const total = r && r.unread ? r.readCount + r.unreadCount : (S.roster && !targeted ? Math.max(0, S.roster - 1) : null);
  const count = Math.max(m.read_count || 0, r ? r.readCount : 0);
  const reads = el("span", "reads" + (total && count >= total ? " all" : ""), count + (total !== null ? " of " + total : "") + " read");
  reads.dataset.readCount = String(count);
  const reading = el("div", "meta"); reading.appendChild(reads);
  if (r && r.unread && r.unreadCount) {
    const names = r.unread.slice(0, 8);
    reading.appendChild(line("span", "readers", ["not yet: ", ...ownList(names), r.unreadCount > names.length ? " +" + (r.unreadCount - names.length) : ""]));
  }
  li.appendChild(reading);
  if (total) { const meter = el("div", "bar-meter"); const fill = el("span"); fill.style.width = Math.min(100, Math.round(100 * count / total)) + "%"; meter.appendChild(fill); li.appendChild(meter); }
  if (r && r.read.length) {
    const names = r.read.slice(-8), more = Math.max(r.readCount, r.read.length) - names.length;
    li.appendChild(line("div", "readers", ["read by ", ...ownList(names), more > 0 ? " and " + more + " more" : ""]));
  }
  const reps = S.replies.get(m.id);
  if (reps && reps.size) {
    const ul = el("ul", "replies");
    for (const rep of reps.values()) ul.appendChild(line("li", null, [own(rep.display_name), ": ", ...replyText(rep)]));
    li.appendChild(ul);
  }
  const open = el("button", "ghost small" + (S.openId === m.id ? " open" : ""), "Receipts");
  open.type = "button"; open.dataset.open = m.id;
  open.setAttribute("aria-label", "Receipts" + (pollOptions(m) ? " and answers" : "") + " of “" + m.message.slice(0, 40) + "”");
  open.setAttribute("aria-controls", "detail"); open.setAttribute("aria-expanded", String(S.openId === m.id));
  open.addEventListener("click", () => openDetail(m.id));
  li.appendChild(open);
  return li;
}

const REPLY = { on_my_way: "on my way", running_late: "running late", cannot_make_it: "cannot make it", done: "done" };
function replyText(rep) {
  if (rep.status === "custom") return [own(rep.text)];
  return [REPLY[rep.status] || rep.status, ...(rep.text ? [" — ", own(rep.text)] : [])];
}

export function addReply(rep) {
  if (!rep || rep.event_id !== S.eventId) return;
  const map = S.replies.get(rep.message_id) || new Map();
  map.set(rep.user_id, rep); S.replies.set(rep.message_id, map);
  const m = S.messages.get(rep.message_id);
  pushAlert("reply", [own(rep.display_name), " replied ", ...replyText(rep), ...(m ? [" to “", own(m.message.slice(0, 60)), "”"] : [])], rep.replied_at);
  renderMessages();
}

export function addNotification(n) {
  if (!n) return;
  // Each once: a reconnect asks for the unread ones again (`caughtUp`).
  if (n.id) { if (S.shownNotes.has(n.id)) return; S.shownNotes.add(n.id); }
  if (n.type === "escalation" && n.data) {
    // The server's sentence names the round, the message and who has not read it.
    pushAlert("escalation", ["ESCALATION: ", own(n.message)], n.created_at);
  } else if (n.type === "help") {
    pushAlert("help", ["HELP: ", own(n.message || n.title)], n.created_at);
  } else {
    pushAlert("note", [own(n.title), ": ", own(n.message)], n.created_at);
  }
}

// `parts`: text and elements (someone's own words in a <bdi>, see `own`).
function pushAlert(kind, parts, at) {
  const li = el("li", kind), body = line("span", null, [clock(at || new Date().toISOString()) + "  ", ...parts]);
  // Someone asking for help, or nobody reading an urgent message, is announced at once.
  if (kind === "help" || kind === "escalation") body.setAttribute("role", "alert");
  li.appendChild(body);
  $("alerts").prepend(li);
  $("no-alerts").hidden = true;
  while ($("alerts").children.length > 100) $("alerts").lastChild.remove();
}


// ---- the receipts panel: the funnel, readers and answers of one message -------------------
function openDetail(id) {
  S.openId = id;
  S.detail = null;
  $("detail").hidden = false;
  renderDetail();
  renderMessages();
  $("detail-h").focus();
  refreshDetail();
  clearInterval(S.detailTimer);
  // Push and email reach raise no frame: ask again every few seconds while it is open.
  S.detailTimer = setInterval(refreshDetail, 3000);
}
export function closeDetail(refocus) {
  const id = S.openId;
  S.openId = null; S.detail = null; clearInterval(S.detailTimer);
  $("detail").hidden = true;
  if (refocus && id) {
    renderMessages();
    const b = $("messages").querySelector('button[data-open="' + id + '"]');
    if (b) b.focus(); else $("messages").focus();
  }
}
$("detail-close").addEventListener("click", () => closeDetail(true));
$("detail").addEventListener("keydown", (e) => { if (e.key === "Escape") closeDetail(true); });

// Frames ask for a refresh through this: a read storm is one `receipt` frame a reader, and a
// refresh each made the page freeze and the server answer thousands of receipts requests
// (attack round: 700 readers, 707 requests, 18 s unresponsive). At most one a second, never
// two at once.
let detailBusy = false, detailAgain = false, detailLast = 0, detailSoon = null;
export function refreshDetailSoon() {
  if (detailBusy || detailSoon) { detailAgain = true; return; }
  detailSoon = setTimeout(() => { detailSoon = null; refreshDetail(); }, Math.max(0, 1000 - (Date.now() - detailLast)));
}
// The list, redrawn once a frame however many frames asked (a read storm again).
let renderQueued = false;
export function renderMessagesSoon() {
  if (renderQueued) return;
  renderQueued = true;
  requestAnimationFrame(() => { renderQueued = false; renderMessages(); });
}

export async function refreshDetail() {
  if (detailBusy) { detailAgain = true; return; }
  detailBusy = true;
  try { await loadDetail(); } finally {
    detailBusy = false; detailLast = Date.now();
    if (detailAgain) { detailAgain = false; refreshDetailSoon(); }
  }
}

async function loadDetail() {
  const id = S.openId, m = S.messages.get(id);
  if (!id || !m) return;
  // The first DETAIL_NAMES of each list and exact counts and totals; the CSV button below
  // fetches everyone (at 10,000 staff the whole lists were a megabyte every 3 s).
  const res = await api("GET", "/v1/messages/" + id + "/receipts?limit=" + DETAIL_NAMES).catch(() => ({ ok: false }));
  let answers = null;
  if (pollOptions(m)) {
    const a = await api("GET", "/v1/messages/" + id + "/answers").catch(() => ({ ok: false }));
    if (a.ok && a.data) answers = a.data;
  }
  if (S.openId !== id) return;
  S.detail = { receipts: res.ok ? res.data : null, answers, error: res.ok ? null : errorText(res) };
  renderDetail();
}

const DETAIL_NAMES = 200, VIA = { live: "live", push: "push", email: "email" };
function reachedText(p) {
  const r = Array.isArray(p.reached) ? p.reached : [];
  return r.length ? "reached by " + r.map((x) => (VIA[x.via] || x.via) + " " + clock(x.at)).join(", ") : "not reached";
}

function renderDetail() {
  const m = S.messages.get(S.openId);
  if (!m) return;
  $("detail-h").textContent = pollOptions(m) ? "Receipts and answers" : "Receipts";
  $("detail-text").textContent = "";
  $("detail-text").append("“", own(m.message), "” · ", ...audienceParts(m));
  const d = S.detail, funnel = $("funnel");
  funnel.textContent = "";
  if (!d) { funnel.textContent = "Loading…"; $("detail-people").textContent = ""; $("detail-poll").hidden = true; return; }
  if (!d.receipts) { funnel.textContent = "Receipts unavailable: " + d.error; return; }
  const r = d.receipts, t = r.totals || {};
  const readCount = r.read_count || 0, unreadCount = r.unread_count !== undefined ? r.unread_count : (r.unread_by || []).length;
  const audience = readCount + unreadCount;
  for (const [key, label] of [["live", "live"], ["push", "push"], ["email", "email"], ["read", "read"]]) {
    const span = el("span", "step");
    span.dataset.step = key;
    span.appendChild(el("b", null, String(t[key] !== undefined ? t[key] : (key === "read" ? r.read_count : 0))));
    span.appendChild(document.createTextNode(" " + label));
    funnel.appendChild(span);
  }
  funnel.appendChild(el("span", "muted", "of " + audience + " people"));
  const people = $("detail-people"); people.textContent = "";
  for (const p of r.read_by || []) people.appendChild(line("li", "read", [own(p.display_name), " — read " + clock(p.read_at) + "; " + reachedText(p)]));
  if (r.read_by_left_out) people.appendChild(el("li", "read muted", "… and " + r.read_by_left_out + " more read (the CSV download lists everyone)"));
  for (const p of r.unread_by || []) people.appendChild(line("li", "unread", [own(p.display_name), " — not read; " + reachedText(p)]));
  if (r.unread_by_left_out) people.appendChild(el("li", "unread muted", "… and " + r.unread_by_left_out + " more not read (the CSV download lists everyone)"));
  const a = d.answers;
  $("detail-poll").hidden = !a;
  if (a) {
    const ul = $("detail-answers"); ul.textContent = "";
    const opts = a.options || pollOptions(m) || [];
    opts.forEach((o, i) => {
      const who = (a.answers || []).filter((x) => x.option === i).map((x) => x.display_name);
      // One grid item (the list is a .poll grid), as the one text it was.
      const li = el("li", o === "I need help" && who.length ? "help" : null);
      li.appendChild(line("span", null, [own(o), ": " + (a.counts ? a.counts[i] || 0 : who.length),
        ...(who.length ? [" — ", ...ownList(who.slice(0, 12)), who.length > 12 ? " and " + (who.length - 12) + " more" : ""] : [])]));
      ul.appendChild(li);
    });
    const un = (a.unanswered || []).map((x) => x.display_name);
    $("detail-answered").textContent = un.length ? "not answered: " : "everyone answered";
    if (un.length) $("detail-answered").append(...ownList(un.slice(0, 12)), un.length > 12 ? " and " + (un.length - 12) + " more" : "");
  }
}

// The receipts as a spreadsheet, for the safety officer: the same CSV as
// `staffcast receipts ID --csv` (GET …/receipts?format=csv), fetched with the session's token
// (never put in a URL) and saved as a file.
$("detail-csv").addEventListener("click", async () => {
  const id = S.openId, status = $("detail-csv-status");
  if (!id) return;
  status.textContent = "Preparing…";
  try {
    const r = await fetch("/v1/messages/" + id + "/receipts?format=csv",
      { headers: { "Authorization": "Bearer " + S.token }, cache: "no-store" });
    if (!r.ok) { status.textContent = "Not downloaded: HTTP " + r.status; return; }
    const url = URL.createObjectURL(await r.blob());
    const a = el("a");
    a.href = url; a.download = "receipts-" + id + ".csv";
    document.body.appendChild(a); a.click(); a.remove();
    setTimeout(() => URL.revokeObjectURL(url), 10000);
    status.textContent = "Downloaded.";
  } catch (err) {
    status.textContent = "Not downloaded: " + String(err);
  }
});
