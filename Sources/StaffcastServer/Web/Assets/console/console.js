// The organiser's web console (docs/protocol.md, Web console): plain JavaScript, no library,
// no build step. It talks to this server only: the HTTP API with the token as a bearer header,
// and the WebSocket with the token as a `staffcast.bearer.` subprotocol (never in a URL). The
// token lives in the tab's sessionStorage. Compiled into the binary (see WebAsset.swift).
"use strict";
(function () {
  const $ = (id) => document.getElementById(id);
  const el = (tag, cls, text) => { const e = document.createElement(tag); if (cls) e.className = cls; if (text !== undefined) e.textContent = text; return e; };
  const TOKEN_KEY = "staffcast.token", EVENT_KEY = "staffcast.event";
  const S = {
    token: sessionStorage.getItem(TOKEN_KEY), me: null, events: [], eventId: null, ws: null, wsOpen: false,
    retry: 0, retryTimer: null, lastSeq: 0, messages: new Map(), receipts: new Map(), replies: new Map(),
    roster: null, pollTimer: null, features: {}, refs: 0, pending: new Map(), invite: null, stopped: false,
    retryFrame: null, confirming: null, paging: false, heldMax: 0,
    teams: [], tallies: new Map(), openId: null, detailTimer: null, detail: null,
  };

  function setConn(text, cls) { const c = $("conn"); c.textContent = text; c.className = "conn " + (cls || ""); }
  function clock(iso) { if (!iso) return ""; const d = new Date(iso); return d.toLocaleTimeString([], { hour: "2-digit", minute: "2-digit" }); }

  async function api(method, path, body) {
    const headers = { "Authorization": "Bearer " + S.token };
    if (body !== undefined) headers["Content-Type"] = "application/json";
    const r = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body), cache: "no-store" });
    let data = null;
    try { data = await r.json(); } catch (_) { data = null; }
    if (r.status === 401) { signOut("Your token is no longer valid. Sign in again."); }
    return { status: r.status, ok: r.ok, data };
  }
  const errorText = (res) => (res.data && res.data.error && res.data.error.message) || ("HTTP " + res.status);

  // ---- sign in / out -------------------------------------------------------------------
  function showOnly(id) { for (const s of ["sign-in", "app"]) $(s).hidden = s !== id; }

  function signOut(reason) {
    S.stopped = true;
    sessionStorage.removeItem(TOKEN_KEY);
    S.token = null;
    if (S.ws) { try { S.ws.close(1000); } catch (_) {} S.ws = null; }
    clearTimeout(S.retryTimer); clearInterval(S.pollTimer);
    $("sign-out").hidden = true; $("event-pick-wrap").hidden = true;
    setConn("signed out");
    showOnly("sign-in");
    $("sign-in-error").textContent = reason || "";
    $("token").focus();
  }

  $("sign-in-form").addEventListener("submit", async (e) => {
    e.preventDefault();
    const t = $("token").value.trim();
    if (!t) return;
    S.token = t;
    const res = await api("GET", "/v1/me/events");
    if (!res.ok) { $("sign-in-error").textContent = res.status === 401 ? "That token is not valid." : errorText(res); S.token = null; return; }
    sessionStorage.setItem(TOKEN_KEY, t);
    $("token").value = "";
    start(res.data.events || []);
  });
  $("sign-out").addEventListener("click", () => signOut(""));

  // ---- events -----------------------------------------------------------------------------
  function start(events) {
    S.stopped = false;
    S.events = events;
    $("sign-out").hidden = false;
    showOnly("app");
    const pick = $("event-pick");
    pick.textContent = "";
    for (const ev of events) {
      const o = el("option", null, ev.name + " (" + ev.access_level + ")");
      o.value = ev.event_id || ev.id;
      pick.appendChild(o);
    }
    $("event-pick-wrap").hidden = events.length === 0;
    if (events.length === 0) { setConn("no events"); $("no-messages").textContent = "Your token has no events."; return; }
    const saved = sessionStorage.getItem(EVENT_KEY);
    const ids = events.map((ev) => ev.event_id || ev.id);
    const preferred = events.find((ev) => ev.access_level !== "staff");
    pick.value = ids.includes(saved) ? saved : (preferred ? (preferred.event_id || preferred.id) : ids[0]);
    selectEvent(pick.value);
  }
  $("event-pick").addEventListener("change", (e) => selectEvent(e.target.value));

  function currentEvent() { return S.events.find((ev) => (ev.event_id || ev.id) === S.eventId); }

  function selectEvent(id) {
    if (S.ws && S.eventId && S.wsOpen) wsSend({ op: "unsubscribe", event_id: S.eventId });
    S.eventId = id;
    sessionStorage.setItem(EVENT_KEY, id);
    S.lastSeq = 0; S.messages.clear(); S.receipts.clear(); S.replies.clear(); S.roster = null;
    S.tallies.clear(); closeDetail(false); S.teams = []; renderTeams();
    $("messages").textContent = ""; $("alerts").textContent = ""; $("people").textContent = "";
    $("no-alerts").hidden = false;
    const ev = currentEvent();
    const organiser = ev && ev.access_level !== "staff";
    $("send-card").hidden = !organiser; $("invite-card").hidden = !organiser;
    $("invite-level").querySelectorAll("option").forEach((o) => {
      const rank = { staff: 1, admin: 2, owner: 3 };
      o.disabled = !ev || rank[o.value] > rank[ev.access_level];
    });
    renderMessages();
    detectFeatures();
    loadEscalations(id);
    if (S.ws && S.wsOpen) subscribe(); else connect();
    poll(); clearInterval(S.pollTimer); S.pollTimer = setInterval(poll, 4000);
  }

  // Unread escalations already waiting (live ones arrive as notification frames).
  async function loadEscalations(id) {
    const res = await api("GET", "/v1/me/notifications?unread=true").catch(() => ({ ok: false }));
    if (!res.ok || !res.data || id !== S.eventId) return;
    for (const n of (res.data.notifications || []).slice().reverse()) {
      if ((n.type === "escalation" || n.type === "help") && (!n.data || !n.data.event_id || n.data.event_id === id)) addNotification(n);
    }
  }

  // Optional APIs: used when this server has them.
  async function detectFeatures() {
    const id = S.eventId;
    const t = await api("GET", "/v1/events/" + id + "/templates").catch(() => ({ ok: false }));
    const sel = $("template");
    sel.textContent = ""; sel.appendChild(el("option", null, "— none —")); sel.firstChild.value = "";
    if (t.ok && t.data && Array.isArray(t.data.templates)) {
      for (const tp of t.data.templates) { const o = el("option", null, tp.name); o.value = tp.name; sel.appendChild(o); }
      S.features.templates = t.data.templates.length > 0;
    } else S.features.templates = false;
    sel.hidden = $("template-label").hidden = !S.features.templates;
    const s = await api("GET", "/v1/events/" + id + "/scheduled").catch(() => ({ ok: false }));
    S.features.scheduled = !!s.ok;
    $("schedule-row").hidden = !S.features.scheduled;
  }

  // ---- WebSocket ------------------------------------------------------------------------
  function connect() {
    if (S.stopped || !S.token) return;
    clearTimeout(S.retryTimer);
    setConn(S.retry ? "reconnecting…" : "connecting…");
    const url = (location.protocol === "https:" ? "wss://" : "ws://") + location.host + "/v1/ws";
    let ws;
    try { ws = new WebSocket(url, ["staffcast.v1", "staffcast.bearer." + S.token]); } catch (_) { return scheduleRetry(); }
    S.ws = ws;
    ws.onopen = () => { S.wsOpen = true; S.retry = 0; setConn("live", "live"); subscribe(); };
    ws.onmessage = (e) => { let f; try { f = JSON.parse(e.data); } catch (_) { return; } onFrame(f); };
    ws.onclose = (e) => {
      if (S.ws !== ws) return;
      S.wsOpen = false; S.ws = null;
      if (e.code === 4401) { signOut("Your token was revoked or expired."); return; }
      scheduleRetry();
    };
  }
  function scheduleRetry() {
    if (S.stopped) return;
    const base = Math.min(30000, 1000 * Math.pow(2, S.retry));
    const wait = base + Math.random() * base * 0.3;
    S.retry += 1;
    setConn("offline · retrying in " + Math.ceil(wait / 1000) + " s", "down");
    S.retryTimer = setTimeout(connect, wait);
  }
  function wsSend(obj) {
    if (!S.ws || !S.wsOpen) return false;
    S.ws.send(JSON.stringify(obj)); return true;
  }
  function subscribe() {
    if (!S.eventId) return;
    const f = { op: "subscribe", event_id: S.eventId };
    if (S.lastSeq > 0) f.since_seq = S.lastSeq; // catch up with exactly what was missed
    // Until the catch-up pages end, live messages do not move the cursor the pages follow
    // (or a page after a live message's seq would skip what lies between).
    S.paging = true; S.heldMax = 0;
    wsSend(f);
  }

  function onFrame(f) {
    switch (f.op) {
      case "hello": S.me = { id: f.user_id, name: f.display_name }; setConn("live · " + f.display_name, "live"); break;
      case "subscribed":
        if (f.event_id !== S.eventId) break;
        for (const m of f.history || []) upsert(m, false);
        pageOn(f.more); renderMessages(); break;
      case "history":
        if (f.event_id !== S.eventId) break;
        for (const m of f.messages || []) upsert(m, false);
        pageOn(f.more); renderMessages(); break;
      case "message": case "sent": case "message_updated":
        if (f.message && f.message.event_id === S.eventId) {
          upsert(f.message, f.op !== "message_updated"); renderMessages();
          if (f.op === "message") announce(f.message);
        }
        if (f.op === "sent") sendSucceeded(f.ref, "Sent.", f.message);
        break;
      case "scheduled": sendSucceeded(f.ref, "Scheduled for " + new Date((f.scheduled || {}).send_at).toLocaleString() + ".", null); break;
      case "message_retracted": {
        const m = S.messages.get(f.message_id); if (m) { m.retracted = true; renderMessages(); } break; }
      case "receipt": {
        const m = S.messages.get(f.message_id);
        if (m) {
          m.read_count = Math.max(m.read_count || 0, f.read_count || 0);
          const r = S.receipts.get(f.message_id) || { read: [], unread: null };
          if (f.display_name && !r.read.includes(f.display_name)) r.read.push(f.display_name);
          if (r.unread) r.unread = r.unread.filter((n) => n !== f.display_name);
          S.receipts.set(f.message_id, r);
          renderMessages();
          if (S.openId === f.message_id) refreshDetail();
        }
        break; }
      case "reply": case "replied": addReply(f.reply); break;
      case "notification": addNotification(f.notification); break;
      case "poll_tally":
        if (f.event_id !== S.eventId) break;
        S.tallies.set(f.message_id, { counts: f.counts || [], answered: f.answered || 0, audience: f.audience || 0 });
        renderMessages();
        if (S.openId === f.message_id) refreshDetail();
        break;
      case "access_revoked":
        if (f.event_id === S.eventId) { setConn("access ended", "down"); S.events = S.events.filter((ev) => (ev.event_id || ev.id) !== f.event_id); start(S.events); }
        break;
      case "error": sendFailed(f.ref, f.message || f.code, f.code); break;
      default: break;
    }
  }

  function pageOn(more) {
    if (more) { wsSend({ op: "history", event_id: S.eventId, after_seq: S.lastSeq, limit: 200 }); return; }
    S.paging = false;
    if (S.heldMax > S.lastSeq) S.lastSeq = S.heldMax;
  }

  function upsert(m, fresh) {
    const old = S.messages.get(m.id);
    if (old) { m.read_count = Math.max(m.read_count || 0, old.read_count || 0); }
    m.fresh = fresh && !old;
    S.messages.set(m.id, m);
    if (fresh && S.paging) { if (m.seq > S.heldMax) S.heldMax = m.seq; } else if (m.seq > S.lastSeq) S.lastSeq = m.seq;
  }

  // ---- rendering --------------------------------------------------------------------------
  function renderMessages() {
    const list = $("messages");
    const items = Array.from(S.messages.values()).sort((a, b) => b.seq - a.seq).slice(0, 200);
    // The list is redrawn on every frame: a focused "Receipts" button is found again after.
    const a = document.activeElement, focusId = a && a.dataset && a.dataset.open;
    list.textContent = "";
    $("no-messages").hidden = items.length > 0;
    for (const m of items) list.appendChild(messageItem(m));
    if (focusId) { const b = list.querySelector('button[data-open="' + focusId + '"]'); if (b) b.focus(); }
  }

  const teamsText = (m) => Array.isArray(m.teams) && m.teams.length ? "to " + m.teams.join(", ") : "to the whole event";
  const pollOptions = (m) => (m.poll && Array.isArray(m.poll.options) ? m.poll.options : null);

  // "Yes 3 · No 1 — 4 of 9 answered" with a bar per option, from the latest poll_tally.
  function pollBlock(m) {
    const opts = pollOptions(m), t = S.tallies.get(m.id);
    const ul = el("ul", "poll");
    ul.setAttribute("aria-label", "Answers");
    const total = t ? t.counts.reduce((x, y) => x + y, 0) : 0;
    opts.forEach((o, i) => {
      const n = t ? (t.counts[i] || 0) : 0;
      const li = el("li", m.poll && m.poll.options.length === 2 && o === "I need help" && n > 0 ? "help" : null);
      li.appendChild(el("span", "opt", o));
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
    meta.appendChild(el("span", null, m.sender_name + " · " + clock(m.sent_at)));
    if (m.expires_at) meta.appendChild(el("span", null, "expires " + clock(m.expires_at)));
    if (m.edited_at) meta.appendChild(el("span", null, "edited"));
    if (m.retracted) meta.appendChild(el("span", null, "retracted"));
    meta.appendChild(el("span", "to-line" + (Array.isArray(m.teams) && m.teams.length ? " some" : ""), teamsText(m)));
    li.appendChild(meta);
    li.appendChild(el("p", "text", m.message));
    if (pollOptions(m)) li.appendChild(pollBlock(m));
    const r = S.receipts.get(m.id);
    const targeted = Array.isArray(m.teams) && m.teams.length > 0; // its audience is known from receipts only
    const total = r && r.unread ? r.read.length + r.unread.length : (S.roster && !targeted ? Math.max(0, S.roster - 1) : null);
    const count = Math.max(m.read_count || 0, r ? r.read.length : 0);
    const reads = el("span", "reads" + (total && count >= total ? " all" : ""), count + (total !== null ? " of " + total : "") + " read");
    reads.dataset.readCount = String(count);
    const line = el("div", "meta"); line.appendChild(reads);
    if (r && r.unread && r.unread.length) line.appendChild(el("span", "readers", "not yet: " + r.unread.slice(0, 8).join(", ") + (r.unread.length > 8 ? " +" + (r.unread.length - 8) : "")));
    li.appendChild(line);
    if (total) { const meter = el("div", "bar-meter"); const fill = el("span"); fill.style.width = Math.min(100, Math.round(100 * count / total)) + "%"; meter.appendChild(fill); li.appendChild(meter); }
    if (r && r.read.length) li.appendChild(el("div", "readers", "read by " + r.read.slice(-8).join(", ") + (r.read.length > 8 ? " and " + (r.read.length - 8) + " more" : "")));
    const reps = S.replies.get(m.id);
    if (reps && reps.size) {
      const ul = el("ul", "replies");
      for (const rep of reps.values()) ul.appendChild(el("li", null, rep.display_name + ": " + replyText(rep)));
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
  function replyText(rep) { return rep.status === "custom" ? rep.text : (REPLY[rep.status] || rep.status) + (rep.text ? " — " + rep.text : ""); }

  function addReply(rep) {
    if (!rep || rep.event_id !== S.eventId) return;
    const map = S.replies.get(rep.message_id) || new Map();
    map.set(rep.user_id, rep); S.replies.set(rep.message_id, map);
    const m = S.messages.get(rep.message_id);
    pushAlert("reply", rep.display_name + " replied " + replyText(rep) + (m ? " to “" + m.message.slice(0, 60) + "”" : ""), rep.replied_at);
    renderMessages();
  }

  function addNotification(n) {
    if (!n) return;
    if (n.type === "escalation" && n.data) {
      const unread = (n.data.unread_by || []).map((u) => u.display_name);
      pushAlert("escalation", "Escalation round " + n.data.round + ": " + unread.length + " have not read" + (unread.length ? " (" + unread.slice(0, 6).join(", ") + ")" : "") + ". " + n.message, n.created_at);
    } else if (n.type === "help") {
      pushAlert("help", "HELP: " + (n.message || n.title), n.created_at);
    } else {
      pushAlert("note", n.title + ": " + n.message, n.created_at);
    }
  }

  function pushAlert(kind, text, at) {
    const li = el("li", kind), body = el("span", null, clock(at || new Date().toISOString()) + "  " + text);
    // Someone asking for help, or nobody reading an urgent message, is announced at once.
    if (kind === "help" || kind === "escalation") body.setAttribute("role", "alert");
    li.appendChild(body);
    $("alerts").prepend(li);
    $("no-alerts").hidden = true;
    while ($("alerts").children.length > 100) $("alerts").lastChild.remove();
  }

  // ---- polling: people and receipts -----------------------------------------------------
  async function poll() {
    const id = S.eventId, ev = currentEvent();
    if (!id || !S.token || !ev || ev.access_level === "staff") return;
    const st = await api("GET", "/v1/events/" + id + "/status").catch(() => ({ ok: false }));
    if (id !== S.eventId) return;
    if (st.ok && st.data) {
      S.roster = st.data.roster;
      renderPeople((st.data.staff || []).map((p) => ({ name: p.display_name, on: p.connected, level: p.access_level, unread: p.unread_count })));
    } else {
      const reach = await api("GET", "/v1/events/" + id + "/reach").catch(() => ({ ok: false }));
      if (reach.ok && reach.data) {
        S.roster = reach.data.roster;
        $("people-count").textContent = reach.data.connected + " of " + reach.data.roster + " connected";
        const ul = $("people"); ul.textContent = "";
        for (const p of reach.data.offline || []) ul.appendChild(personItem({ name: p.display_name, on: false }));
      }
    }
    $("roster").textContent = S.roster ? "· " + S.roster + " people on the event" : "";
    await loadTeams(id);
    // Receipts of the newest messages not yet read by everyone.
    const recent = Array.from(S.messages.values()).filter((m) => !m.retracted).sort((a, b) => b.seq - a.seq).slice(0, 6);
    for (const m of recent) {
      const r = S.receipts.get(m.id);
      if (r && r.unread && r.unread.length === 0) continue;
      const res = await api("GET", "/v1/messages/" + m.id + "/receipts").catch(() => ({ ok: false }));
      if (!res.ok || !res.data || id !== S.eventId) continue;
      S.receipts.set(m.id, { read: res.data.read_by.map((u) => u.display_name), unread: res.data.unread_by.map((u) => u.display_name) });
      m.read_count = Math.max(m.read_count || 0, res.data.read_count || 0);
    }
    // Polls seen before any poll_tally (sent before this page opened): their counts once.
    for (const m of recent) {
      if (!pollOptions(m) || S.tallies.has(m.id)) continue;
      const res = await api("GET", "/v1/messages/" + m.id + "/answers").catch(() => ({ ok: false }));
      if (!res.ok || !res.data || id !== S.eventId || S.tallies.has(m.id)) continue;
      S.tallies.set(m.id, { counts: res.data.counts || [], answered: (res.data.answers || []).length,
        audience: (res.data.answers || []).length + (res.data.unanswered || []).length });
    }
    renderMessages();
  }

  // ---- teams and zones: the "To" of the send form ------------------------------------------
  async function loadTeams(id) {
    const res = await api("GET", "/v1/events/" + id + "/teams").catch(() => ({ ok: false }));
    if (id !== S.eventId) return;
    const teams = res.ok && res.data && Array.isArray(res.data.teams) ? res.data.teams : [];
    const same = teams.length === S.teams.length && teams.every((t, i) => t.name === S.teams[i].name && t.members === S.teams[i].members);
    S.teams = teams;
    if (!same) renderTeams();
  }
  function chosenTeams() {
    return Array.from($("to-list").querySelectorAll("input[data-team]")).filter((c) => c.checked).map((c) => c.dataset.team);
  }
  // Redrawn only when the teams change, keeping what is ticked (and the focus).
  function renderTeams() {
    const list = $("to-list"), keep = new Set(chosenTeams());
    const focused = document.activeElement && document.activeElement.dataset ? document.activeElement.dataset.team : null;
    list.querySelectorAll("label.team").forEach((l) => l.remove());
    for (const t of S.teams) {
      const label = el("label", "check team"), box = el("input");
      box.type = "checkbox"; box.dataset.team = t.name; box.checked = keep.has(t.name);
      box.addEventListener("change", toChanged);
      label.appendChild(box);
      label.appendChild(document.createTextNode(" " + t.name + " "));
      label.appendChild(el("span", "muted", (t.kind === "zone" ? "zone · " : "") + t.members));
      list.appendChild(label);
      if (focused === t.name) box.focus();
    }
    $("to-set").hidden = S.teams.length === 0;
    $("to-all").checked = chosenTeams().length === 0;
  }
  function toChanged() { $("to-all").checked = chosenTeams().length === 0; }
  $("to-all").addEventListener("change", () => {
    if ($("to-all").checked) $("to-list").querySelectorAll("input[data-team]").forEach((c) => { c.checked = false; });
    else if (chosenTeams().length === 0) $("to-all").checked = true; // someone must be the audience
  });

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
  function closeDetail(refocus) {
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

  async function refreshDetail() {
    const id = S.openId, m = S.messages.get(id);
    if (!id || !m) return;
    const res = await api("GET", "/v1/messages/" + id + "/receipts").catch(() => ({ ok: false }));
    let answers = null;
    if (pollOptions(m)) {
      const a = await api("GET", "/v1/messages/" + id + "/answers").catch(() => ({ ok: false }));
      if (a.ok && a.data) answers = a.data;
    }
    if (S.openId !== id) return;
    S.detail = { receipts: res.ok ? res.data : null, answers, error: res.ok ? null : errorText(res) };
    renderDetail();
  }

  const VIA = { live: "live", push: "push", email: "email" };
  function reachedText(p) {
    const r = Array.isArray(p.reached) ? p.reached : [];
    return r.length ? "reached by " + r.map((x) => (VIA[x.via] || x.via) + " " + clock(x.at)).join(", ") : "not reached";
  }

  function renderDetail() {
    const m = S.messages.get(S.openId);
    if (!m) return;
    $("detail-h").textContent = pollOptions(m) ? "Receipts and answers" : "Receipts";
    $("detail-text").textContent = "“" + m.message + "” · " + teamsText(m);
    const d = S.detail, funnel = $("funnel");
    funnel.textContent = "";
    if (!d) { funnel.textContent = "Loading…"; $("detail-people").textContent = ""; $("detail-poll").hidden = true; return; }
    if (!d.receipts) { funnel.textContent = "Receipts unavailable: " + d.error; return; }
    const r = d.receipts, t = r.totals || {};
    const audience = (r.read_by || []).length + (r.unread_by || []).length;
    for (const [key, label] of [["live", "live"], ["push", "push"], ["email", "email"], ["read", "read"]]) {
      const span = el("span", "step");
      span.dataset.step = key;
      span.appendChild(el("b", null, String(t[key] !== undefined ? t[key] : (key === "read" ? r.read_count : 0))));
      span.appendChild(document.createTextNode(" " + label));
      funnel.appendChild(span);
    }
    funnel.appendChild(el("span", "muted", "of " + audience + " people"));
    const people = $("detail-people"); people.textContent = "";
    for (const p of r.read_by || []) people.appendChild(el("li", "read", p.display_name + " — read " + clock(p.read_at) + "; " + reachedText(p)));
    for (const p of r.unread_by || []) people.appendChild(el("li", "unread", p.display_name + " — not read; " + reachedText(p)));
    const a = d.answers;
    $("detail-poll").hidden = !a;
    if (a) {
      const ul = $("detail-answers"); ul.textContent = "";
      const opts = a.options || pollOptions(m) || [];
      opts.forEach((o, i) => {
        const who = (a.answers || []).filter((x) => x.option === i).map((x) => x.display_name);
        ul.appendChild(el("li", o === "I need help" && who.length ? "help" : null, o + ": " + (a.counts ? a.counts[i] || 0 : who.length) + (who.length ? " — " + who.slice(0, 12).join(", ") + (who.length > 12 ? " and " + (who.length - 12) + " more" : "") : "")));
      });
      const un = (a.unanswered || []).map((x) => x.display_name);
      $("detail-answered").textContent = un.length ? "not answered: " + un.slice(0, 12).join(", ") + (un.length > 12 ? " and " + (un.length - 12) + " more" : "") : "everyone answered";
    }
  }

  function personItem(p) {
    const li = el("li");
    const left = el("span"); left.appendChild(el("span", "dot" + (p.on ? " on" : ""))); left.appendChild(document.createTextNode(p.name));
    li.appendChild(left);
    li.appendChild(el("span", "muted", (p.on ? "connected" : "not connected") + (p.level ? " · " + p.level : "") + (p.unread ? " · " + p.unread + " unread" : "")));
    return li;
  }
  function renderPeople(people) {
    const ul = $("people"); ul.textContent = "";
    people.sort((a, b) => (a.on === b.on ? a.name.localeCompare(b.name) : a.on ? 1 : -1));
    for (const p of people) ul.appendChild(personItem(p));
    $("people-count").textContent = people.filter((p) => p.on).length + " of " + people.length + " connected";
  }

  // ---- sending ---------------------------------------------------------------------------
  // The text stays in the box until the server has stored it: a refused send (a duplicate, a
  // bad field, no connection) loses nothing and says why in the alert under the form.
  function announce(m) { $("announce").textContent = "New " + m.priority + " " + m.message_type + " from " + m.sender_name + ": " + m.message; }

  function showSendError(text, retryFrame) {
    const box = $("send-error");
    box.textContent = text;
    box.classList.add("shown");
    S.retryFrame = retryFrame || null;
    $("send-anyway").hidden = !retryFrame;
    $("send-status").textContent = "";
  }
  function clearSendError() {
    $("send-error").textContent = ""; $("send-error").classList.remove("shown");
    $("send-anyway").hidden = true; S.retryFrame = null;
  }

  function sendSucceeded(ref, text, message) {
    if (!ref || !S.pending.has(ref)) return;
    const p = S.pending.get(ref); S.pending.delete(ref); clearTimeout(p.timer);
    $("send-button").disabled = false;
    clearSendError();
    // Only now the form is emptied, and back to the defaults: the next message is not an
    // emergency by accident.
    if ($("message").value === p.typed) $("message").value = "";
    $("type").value = "broadcast"; $("priority").value = "normal"; $("template").value = "";
    $("send-at").value = "";
    $("poll-kind").value = ""; $("poll-options").value = ""; pollKindChanged();
    $("to-list").querySelectorAll("input[data-team]").forEach((c) => { c.checked = false; }); $("to-all").checked = true;
    $("send-status").textContent = text;
    if (message) showReach(message, text);
  }

  function sendFailed(ref, why, code) {
    if (!ref || !S.pending.has(ref)) return;
    const p = S.pending.get(ref); S.pending.delete(ref); clearTimeout(p.timer);
    $("send-button").disabled = false;
    if (code === "conflict") {
      const again = Object.assign({}, p.frame, { force: true });
      // The server's sentence ends with the command-line way to force; here it is the button.
      showSendError("Not sent: " + why.replace(/\s*Send it with force[^]*$/, "") + " Press “Send anyway” if it really should go out twice.", again);
    } else {
      showSendError("Not sent: " + why, null);
    }
  }

  // "delivered live to N of M recipients; not connected: …" as `staffcast send` prints it (the
  // sender left out), from the reach of the message's audience right after it was stored.
  async function showReach(m, prefix) {
    const q = Array.isArray(m.teams) && m.teams.length ? "?teams=" + encodeURIComponent(m.teams.join(",")) : "";
    const res = await api("GET", "/v1/events/" + m.event_id + "/reach" + q).catch(() => ({ ok: false }));
    if (!res.ok || !res.data || $("send-status").textContent !== prefix) return;
    const me = S.me && S.me.id;
    const off = (res.data.offline || []).filter((p) => p.user_id !== me);
    const live = (res.data.online || []).filter((p) => p.user_id !== me).length;
    let line = " Delivered live to " + live + " of " + (live + off.length) + " recipients";
    if (off.length) line += "; not connected: " + off.slice(0, 10).map((p) => p.display_name).join(", ") + (off.length > 10 ? " and " + (off.length - 10) + " more" : "");
    $("send-status").textContent = prefix + line + ".";
  }

  function transmit(f, typed) {
    f.ref = "send-" + (++S.refs);
    if (!wsSend(f)) { showSendError("Not sent: not connected to the server. Your text is kept; try again in a moment.", null); return; }
    const timer = setTimeout(() => sendFailed(f.ref, "no answer from the server within 10 s. Check the list before sending again."), 10000);
    S.pending.set(f.ref, { frame: f, typed, timer });
    clearSendError();
    $("send-status").textContent = "Sending…";
    $("send-button").disabled = true;
  }

  function confirmEmergency(f, typed) {
    const ev = currentEvent();
    const n = S.roster ? Math.max(0, S.roster - 1) : null;
    const who = f.teams ? "everyone in " + f.teams.join(", ") : (n !== null ? n + " people" : "everyone");
    $("confirm-text").textContent = "It takes over the screen of " + who + " on "
      + (ev ? ev.name : "this event") + " and keeps ringing until each acknowledges it:\n“" + (f.message || f.template) + "”";
    const dlg = $("confirm-emergency");
    S.confirming = { f, typed };
    dlg.showModal();
    $("confirm-cancel").focus();
  }
  $("confirm-send").addEventListener("click", () => {
    const c = S.confirming; S.confirming = null;
    $("confirm-emergency").close();
    if (c) transmit(c.f, c.typed);
  });
  $("confirm-cancel").addEventListener("click", () => { S.confirming = null; $("confirm-emergency").close(); });
  $("confirm-emergency").addEventListener("close", () => { S.confirming = null; $("message").focus(); });

  $("send-form").addEventListener("submit", (e) => {
    e.preventDefault();
    const text = $("message").value, template = $("template").value;
    if (!text.trim() && !template) { showSendError("Write a message first.", null); $("message").focus(); return; }
    const f = { op: "send", event_id: S.eventId, message_type: $("type").value, priority: $("priority").value };
    if (template && !text.trim()) f.template = template; else f.message = text;
    const exp = parseInt($("expires").value, 10); if (exp > 0) f.expires_in_minutes = exp;
    if (S.features.scheduled && $("send-at").value) f.send_at = new Date($("send-at").value).toISOString();
    const teams = chosenTeams(); if (teams.length) f.teams = teams;
    const kind = $("poll-kind").value;
    if (kind === "safe") f.poll = { options: "safe" };
    else if (kind === "options") {
      const opts = $("poll-options").value.split(",").map((o) => o.trim()).filter((o) => o.length > 0);
      const problem = opts.length < 2 || opts.length > 6 ? "A poll needs 2 to 6 options, separated by commas."
        : new Set(opts).size !== opts.length ? "Each option of a poll must be different."
        : opts.some((o) => new TextEncoder().encode(o).length > 100) ? "Each option of a poll must be at most 100 bytes." : null;
      if (problem) { showSendError("Not sent: " + problem, null); $("poll-options").focus(); return; }
      f.poll = { options: opts };
    }
    if (f.message_type === "emergency") confirmEmergency(f, text); else transmit(f, text);
  });
  $("send-anyway").addEventListener("click", () => {
    const f = S.retryFrame; if (!f) return;
    const again = Object.assign({}, f); delete again.ref;
    transmit(again, $("message").value);
  });
  function pollKindChanged() {
    const options = $("poll-kind").value === "options";
    $("poll-options-wrap").hidden = !options;
    $("poll-hint").hidden = $("poll-kind").value === "";
  }
  $("poll-kind").addEventListener("change", () => { pollKindChanged(); if ($("poll-kind").value === "options") $("poll-options").focus(); });
  // An emergency goes out as urgent unless the organiser says otherwise after choosing it.
  $("type").addEventListener("change", () => { if ($("type").value === "emergency") $("priority").value = "urgent"; });
  // "Send anyway" repeats exactly what was refused: once the text changes, it is a new send.
  $("message").addEventListener("input", () => { if (S.retryFrame) { S.retryFrame = null; $("send-anyway").hidden = true; } });
  $("message").addEventListener("keydown", (e) => { if (e.key === "Enter" && (e.ctrlKey || e.metaKey)) $("send-form").requestSubmit(); });

  // ---- invites -----------------------------------------------------------------------------
  $("invite-form").addEventListener("submit", async (e) => {
    e.preventDefault();
    $("invite-status").textContent = "Creating…";
    const res = await api("POST", "/v1/events/" + S.eventId + "/invites?qr=svg", {
      access_level: $("invite-level").value, expires_in_minutes: parseInt($("invite-expires").value, 10) || 60,
      max_uses: parseInt($("invite-uses").value, 10) || 1 });
    if (!res.ok) { $("invite-status").textContent = errorText(res); return; }
    S.invite = res.data;
    $("invite-status").textContent = "";
    $("invite-result").hidden = false;
    if (res.data.qr_svg) $("invite-qr").src = "data:image/svg+xml;base64," + btoa(res.data.qr_svg);
    $("invite-url").textContent = res.data.url; $("invite-url").href = res.data.url;
    $("invite-facts").textContent = res.data.access_level + " · up to " + res.data.max_uses + " people · valid until " + new Date(res.data.expires_at).toLocaleString();
    $("invite-revoke").disabled = false;
  });
  $("invite-revoke").addEventListener("click", async () => {
    if (!S.invite) return;
    const res = await api("DELETE", "/v1/invites/" + encodeURIComponent(S.invite.code));
    $("invite-facts").textContent = res.ok ? "Revoked: the link no longer works." : errorText(res);
    if (res.ok) { $("invite-revoke").disabled = true; $("invite-qr").removeAttribute("src"); }
  });

  // ---- boot ------------------------------------------------------------------------------
  if (S.token) {
    api("GET", "/v1/me/events").then((res) => { if (res.ok) start(res.data.events || []); else if (res.status !== 401) signOut(errorText(res)); })
      .catch(() => signOut("The server cannot be reached."));
  } else signOut("");
})();
