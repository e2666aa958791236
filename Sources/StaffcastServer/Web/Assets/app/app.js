// The staff app (docs/protocol.md, The staff app): plain JavaScript, no library, no build step,
// nothing from another origin. The invite link (/join/CODE) redeems here and keeps the token in
// this device's localStorage; the WebSocket carries it as the `staffcast.bearer.` subprotocol
// (never in a URL). The last messages and the catch-up cursor are kept in localStorage too, so
// the app opens without a network (the service worker, sw.js, keeps the files).
"use strict";
(function () {
  const $ = (id) => document.getElementById(id);
  const el = (tag, cls, text) => { const e = document.createElement(tag); if (cls) e.className = cls; if (text !== undefined) e.textContent = text; return e; };
  const KEY = "staffcast.app", KEEP = 200;
  const TEXT = window.STAFFCAST_TEXT || { en: {} };
  const saved = (() => { try { return JSON.parse(localStorage.getItem(KEY)) || {}; } catch (_) { return {}; } })();
  const S = {
    token: saved.token || null, userId: saved.user_id || null, name: saved.display_name || "", eventId: saved.event_id || null,
    eventName: saved.event_name || "",
    lang: saved.lang || ((navigator.language || "en").toLowerCase().startsWith("tr") ? "tr" : "en"),
    events: [], ws: null, wsOpen: false, retry: 0, retryTimer: null, pingTimer: null, pongDue: null,
    msgs: new Map(), cursor: 0, paging: false, heldMax: 0, unread: null, alarms: [], acking: null,
    pendingReads: new Set(), refs: 0, pending: new Map(), banner: null, stopped: false, alarmTimer: null,
  };

  // ---- text ----------------------------------------------------------------------------------
  function t(key, vars) {
    let s = (TEXT[S.lang] && TEXT[S.lang][key]) || TEXT.en[key] || key;
    for (const k in (vars || {})) s = s.split("{" + k + "}").join(String(vars[k]));
    return s;
  }
  function applyText() {
    document.documentElement.lang = S.lang;
    for (const e of document.querySelectorAll("[data-t]")) e.textContent = t(e.dataset.t);
    $("lang").value = S.lang;
  }
  const REPLIES = [["on_my_way", "replyOnMyWay"], ["running_late", "replyRunningLate"], ["cannot_make_it", "replyCannotMakeIt"], ["done", "replyDone"]];
  const replyName = (status) => { const r = REPLIES.find((x) => x[0] === status); return r ? t(r[1]) : status; };
  const clock = (iso) => iso ? new Date(iso).toLocaleTimeString(S.lang, { hour: "2-digit", minute: "2-digit" }) : "";

  // ---- storage -------------------------------------------------------------------------------
  function save() {
    localStorage.setItem(KEY, JSON.stringify({ token: S.token, user_id: S.userId, display_name: S.name, event_id: S.eventId,
      event_name: S.eventName, lang: S.lang }));
  }
  const cacheKey = () => KEY + ".cache." + S.eventId;
  function saveCache() {
    if (!S.eventId) return;
    const last = sorted().slice(-KEEP);
    try { localStorage.setItem(cacheKey(), JSON.stringify({ cursor: S.cursor, unread: S.unread, alarms: S.alarms, messages: last })); } catch (_) { /* full: the server has it all */ }
  }
  function loadCache() {
    S.msgs.clear(); S.cursor = 0; S.unread = null; S.alarms = [];
    let c = null; try { c = JSON.parse(localStorage.getItem(cacheKey())); } catch (_) {}
    if (!c) return;
    for (const m of c.messages || []) S.msgs.set(m.id, m);
    S.cursor = c.cursor || 0; S.unread = typeof c.unread === "number" ? c.unread : null;
    S.alarms = (c.alarms || []).filter((id) => S.msgs.has(id));
  }
  // At most MAX messages in memory (a phone at a long event): the oldest go first.
  const MAX = 2000;
  function trim() {
    if (S.msgs.size <= MAX) return;
    for (const m of sorted().slice(0, S.msgs.size - MAX)) S.msgs.delete(m.id);
  }
  const sorted = () => Array.from(S.msgs.values()).sort((a, b) => a.seq - b.seq);
  const expired = (m) => m.expires_at && new Date(m.expires_at).getTime() <= Date.now();

  function setEventName(name) { S.eventName = name; save(); $("event-name").textContent = name || "staffcast"; }

  // ---- views ---------------------------------------------------------------------------------
  function show(id) { for (const s of ["join", "signed-out", "home"]) $(s).hidden = s !== id; }
  function setConn(key, vars, cls) {
    const c = $("conn"); c.textContent = t(key, vars); c.className = "conn " + (cls || "");
    c.dataset.state = key; S.conn = [key, vars, cls];
  }
  // `keep`: stays when the connection comes back (a check-in's result), until the next notice.
  function notice(text, keep) { S.noticeKept = !!(text && keep); $("notice").textContent = text || ""; $("notice").hidden = !text; }

  function signedOut(reason) {
    S.stopped = true; S.token = null; save();
    if (S.ws) { try { S.ws.close(1000); } catch (_) {} S.ws = null; }
    clearTimeout(S.retryTimer); clearInterval(S.pingTimer); stopAlarm();
    $("alarm").hidden = true; setInert(false);
    setConn("offline", null, "down");
    show("signed-out");
    $("signed-out-text").textContent = reason || t("signedOutText");
  }

  // ---- joining with an invite (/join/CODE) ------------------------------------------------------
  function joinMode(code) {
    show("join"); setConn("offline");
    $("join-name").value = S.name || "";
    $("join-name").focus();
    $("join-form").addEventListener("submit", async (e) => {
      e.preventDefault();
      const name = $("join-name").value.trim();
      if (!name) return;
      $("join-button").disabled = true; $("join-error").textContent = ""; $("join-button").textContent = t("joining");
      let r = null, data = null;
      try {
        r = await fetch("/v1/invites/" + encodeURIComponent(code) + "/redeem", {
          method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify({ display_name: name }) });
        try { data = await r.json(); } catch (_) {}
      } catch (err) { data = { error: { message: String(err) } }; }
      $("join-button").disabled = false; $("join-button").textContent = t("join");
      if (!r || !r.ok) {
        const why = r && r.status === 410 ? t("joinGone") : r && r.status === 404 ? t("joinNotFound") : r && r.status === 429 ? t("joinRateLimited")
          : t("joinFailed", { reason: (data && data.error && data.error.message) || (r ? "HTTP " + r.status : "") });
        $("join-error").textContent = why; return;
      }
      S.token = data.token; S.userId = data.user_id; S.eventId = data.event_id; S.name = name; S.eventName = "";
      save();
      location.replace("/app");
    });
  }

  // ---- the WebSocket ---------------------------------------------------------------------------
  function connect() {
    if (S.stopped || !S.token) return;
    clearTimeout(S.retryTimer);
    if (S.ws) return;
    setConn("connecting");
    const url = (location.protocol === "https:" ? "wss://" : "ws://") + location.host + "/v1/ws";
    let ws, opened = false;
    try { ws = new WebSocket(url, ["staffcast.v1", "staffcast.bearer." + S.token]); } catch (_) { return retry(); }
    S.ws = ws;
    ws.onopen = () => {
      opened = true; S.wsOpen = true; S.retry = 0; setConn("live", null, "live"); if (!S.noticeKept) notice("");
      subscribe();
      clearInterval(S.pingTimer);
      // A phone that loses its network may not notice for minutes: ask, and give up on silence.
      S.pingTimer = setInterval(() => {
        if (S.pongDue && Date.now() > S.pongDue) { try { ws.close(4000); } catch (_) {} return; }
        if (!S.pongDue) { S.pongDue = Date.now() + 10000; send({ op: "ping" }); }
      }, 20000);
    };
    ws.onmessage = (e) => { let f; try { f = JSON.parse(e.data); } catch (_) { return; } onFrame(f); };
    ws.onclose = async (e) => {
      if (S.ws !== ws) return;
      S.ws = null; S.wsOpen = false; S.pongDue = null; clearInterval(S.pingTimer);
      S.paging = false;
      if (e.code === 4401) return signedOut(t("tokenInvalid"));
      if (!opened) {
        // Refused before the upgrade: a 401 means this sign-in is over; anything else, retry.
        try {
          const r = await fetch("/v1/me/events", { headers: { "Authorization": "Bearer " + S.token }, cache: "no-store" });
          if (r.status === 401) return signedOut(t("tokenInvalid"));
        } catch (_) { /* offline */ }
      }
      retry();
    };
  }
  function retry() {
    if (S.stopped) return;
    const base = Math.min(30000, 1000 * Math.pow(2, S.retry));
    const wait = base + Math.random() * base * 0.3;
    S.retry += 1;
    setConn("retrying", { n: Math.ceil(wait / 1000) }, "down");
    if (S.msgs.size) notice(t("offlineCached"));
    S.retryTimer = setTimeout(connect, wait);
  }
  function send(f) { if (!S.ws || !S.wsOpen) return false; S.ws.send(JSON.stringify(f)); return true; }
  function request(f, onError) {
    f.ref = "a" + (++S.refs);
    if (onError) S.pending.set(f.ref, onError);
    return send(f);
  }

  function subscribe() {
    if (!S.eventId) return;
    const f = { op: "subscribe", event_id: S.eventId, ref: "sub" };
    if (S.cursor > 0) f.since_seq = S.cursor; // exactly what was missed, however long
    // Until the pages end, live messages do not move the cursor the pages follow.
    S.paging = true; S.heldMax = 0;
    send(f);
  }
  function pageOn(more) {
    if (more) { send({ op: "history", event_id: S.eventId, after_seq: S.cursor, limit: 200 }); return; }
    S.paging = false;
    if (S.heldMax > S.cursor) S.cursor = S.heldMax;
    for (const id of S.pendingReads) send({ op: "mark_read", message_id: id });
    trim(); saveCache();
  }

  function onFrame(f) {
    switch (f.op) {
      case "hello":
        S.userId = f.user_id; S.name = f.display_name; save(); break;
      case "subscribed":
        if (f.event_id !== S.eventId) break;
        if (f.event_name) setEventName(f.event_name);
        for (const m of f.history || []) put(m, false);
        for (const m of f.history || []) if (m.seq > S.cursor) S.cursor = m.seq;
        S.unread = f.unread_count;
        pageOn(f.more); render(); break;
      case "history":
        if (f.event_id !== S.eventId) break;
        for (const m of f.messages || []) { put(m, false); if (m.seq > S.cursor) S.cursor = m.seq; }
        pageOn(f.more); render(); break;
      case "message": {
        const m = f.message;
        if (!m || m.event_id !== S.eventId) break;
        const isNew = !S.msgs.has(m.id);
        put(m, true);
        if (S.paging) { if (m.seq > S.heldMax) S.heldMax = m.seq; } else if (m.seq > S.cursor) S.cursor = m.seq;
        if (isNew && !m.read && m.sender_id !== S.userId) {
          if (S.unread !== null) S.unread += 1;
          if (m.message_type !== "emergency") showBanner(m);
          const say = t("newMessage", { priority: t(m.priority), name: m.sender_name, text: m.message });
          $(m.priority === "urgent" || m.message_type !== "broadcast" ? "announce-urgent" : "announce").textContent = say;
          if (document.hidden && navigator.vibrate && m.priority !== "low") navigator.vibrate(200);
        }
        trim(); render(); saveCache(); break; }
      case "message_updated": {
        const m = f.message, old = m && S.msgs.get(m.id);
        if (old) { Object.assign(old, { message: m.message, edited_at: m.edited_at, expires_at: m.expires_at }); render(); saveCache(); }
        break; }
      case "message_retracted": {
        const m = S.msgs.get(f.message_id);
        if (m) {
          if (!m.read && m.sender_id !== S.userId && S.unread) S.unread -= 1;
          S.msgs.delete(f.message_id); S.alarms = S.alarms.filter((id) => id !== f.message_id);
          if (S.banner === f.message_id) hideBanner();
          render(); saveCache();
        }
        break; }
      case "read": {
        const m = S.msgs.get(f.message_id);
        if (m) m.read = true;
        S.pendingReads.delete(f.message_id);
        if (f.event_id === S.eventId) S.unread = f.unread_count;
        S.alarms = S.alarms.filter((id) => id !== f.message_id);
        if (S.acking === f.message_id) S.acking = null;
        if (S.banner === f.message_id) hideBanner();
        render(); saveCache(); break; }
      case "reminder": {
        const m = f.message;
        if (!m || m.event_id !== S.eventId) break;
        put(m, false);
        const stored = S.msgs.get(m.id);
        stored.reminder = f.round;
        if (!stored.read && !S.alarms.includes(m.id)) S.alarms.push(m.id);
        render(); saveCache(); break; }
      case "replied": {
        const m = f.reply && S.msgs.get(f.reply.message_id);
        if (m) { m.my_reply = f.reply.status; render(); saveCache(); }
        break; }
      case "answered": {
        // Answering marks it read (docs/protocol.md, Audiences); the reply says only `answered`.
        const m = S.msgs.get(f.message_id);
        if (m) {
          if (!m.read && !S.pendingReads.has(m.id) && typeof S.unread === "number") S.unread = Math.max(0, S.unread - 1);
          m.answer = f.option; m.read = true;
          S.alarms = S.alarms.filter((id) => id !== m.id);
          if (S.banner === m.id) hideBanner();
          render(); saveCache();
        }
        break; }
      case "access_revoked":
        if (f.event_id === S.eventId) signedOut(t("accessEnded"));
        break;
      case "pong": S.pongDue = null; break;
      case "error": {
        const onError = f.ref && S.pending.get(f.ref);
        if (onError) { S.pending.delete(f.ref); onError(f); break; }
        if (f.ref === "sub" && f.code === "unavailable") { setTimeout(subscribe, 500); break; }
        notice(t("failed", { reason: f.message || f.code }));
        break; }
      default: break;
    }
    if (f.ref && f.op !== "error") S.pending.delete(f.ref);
  }

  function put(m, live) {
    if (expired(m)) return;
    const old = S.msgs.get(m.id);
    if (old) { m.my_reply = m.my_reply || old.my_reply; m.reminder = old.reminder; if (old.read) m.read = true; }
    S.msgs.set(m.id, m);
    if (m.message_type === "emergency" && !m.read && m.sender_id !== S.userId && !S.alarms.includes(m.id)) S.alarms.push(m.id);
  }

  // ---- actions -----------------------------------------------------------------------------
  function markRead(id) {
    S.pendingReads.add(id);
    request({ op: "mark_read", message_id: id }, (err) => { S.pendingReads.delete(id); notice(t("failed", { reason: err.message })); });
  }
  // Replies and answers need the connection (a read waits for it in pendingReads instead).
  function reply(id, status) { if (!request({ op: "reply", message_id: id, status }, failed)) notice(t("notConnected")); }
  function answer(id, option) { if (!request({ op: "answer", message_id: id, option }, failed)) notice(t("notConnected")); }
  function failed(err) { notice(t("failed", { reason: err.message || err.code })); }

  // ---- rendering ------------------------------------------------------------------------------
  function render() {
    const list = $("list");
    const focused = document.activeElement && document.activeElement.dataset ? document.activeElement.dataset.key : null;
    const items = sorted().filter((m) => !expired(m)).reverse();
    list.textContent = "";
    for (const m of items) list.appendChild(item(m));
    $("empty").hidden = items.length > 0;
    if (focused) { const again = list.querySelector('[data-key="' + focused + '"]'); if (again) again.focus(); }
    const n = S.unread !== null ? S.unread : items.filter((m) => !m.read && m.sender_id !== S.userId).length;
    $("unread").hidden = n <= 0; $("unread").textContent = t("unread", { n });
    document.title = (n > 0 ? "(" + n + ") " : "") + ($("event-name").textContent || "staffcast");
    if ("setAppBadge" in navigator) { (n > 0 ? navigator.setAppBadge(n) : navigator.clearAppBadge()).catch(() => {}); }
    renderAlarm();
  }

  function button(label, key, onClick, cls) {
    const b = el("button", cls || "small", label);
    b.type = "button"; b.dataset.key = key; b.addEventListener("click", onClick);
    return b;
  }

  function item(m) {
    const li = el("li", "msg p-" + m.priority + " t-" + m.message_type + (m.read || m.sender_id === S.userId ? "" : " unread"));
    li.dataset.id = m.id; li.dataset.seq = String(m.seq);
    const meta = el("p", "meta");
    meta.appendChild(el("span", "badge " + m.priority, t(m.priority)));
    if (m.message_type !== "broadcast") meta.appendChild(el("span", "badge kind", t(m.message_type)));
    meta.appendChild(el("span", null, t("sentBy", { name: m.sender_name, time: clock(m.sent_at) })));
    if (m.expires_at) meta.appendChild(el("span", null, t("expires", { time: clock(m.expires_at) })));
    if (m.edited_at) meta.appendChild(el("span", null, t("edited")));
    li.appendChild(meta);
    li.appendChild(el("p", "text", m.message));
    // Polls (docs/protocol.md, Audiences): the options as buttons, when the server sends them.
    if (m.poll && Array.isArray(m.poll.options)) {
      const g = el("div", "poll"); g.setAttribute("role", "group"); g.setAttribute("aria-label", t("pollLabel"));
      m.poll.options.forEach((o, i) => {
        const b = button(o, m.id + ":answer:" + i, () => answer(m.id, i), "small" + (m.answer === i ? " chosen" : ""));
        b.setAttribute("aria-pressed", m.answer === i ? "true" : "false");
        g.appendChild(b);
      });
      li.appendChild(g);
      if (typeof m.answer === "number" && m.poll.options[m.answer] !== undefined) li.appendChild(el("p", "mine", t("yourAnswer", { option: m.poll.options[m.answer] })));
    }
    const actions = el("div", "actions");
    if (m.sender_id !== S.userId) {
      if (m.read) actions.appendChild(el("span", "done", "✓ " + t("isRead")));
      else actions.appendChild(button(t("markRead"), m.id + ":read", () => markRead(m.id), "small primary"));
      const g = el("div", "replies"); g.setAttribute("role", "group"); g.setAttribute("aria-label", t("replyLabel"));
      for (const [status, key] of REPLIES) {
        const b = button(t(key), m.id + ":reply:" + status, () => reply(m.id, status), "small ghost" + (m.my_reply === status ? " chosen" : ""));
        b.setAttribute("aria-pressed", m.my_reply === status ? "true" : "false");
        g.appendChild(b);
      }
      actions.appendChild(g);
    }
    li.appendChild(actions);
    if (m.my_reply) li.appendChild(el("p", "mine", t("youReplied", { status: replyName(m.my_reply) })));
    return li;
  }

  // A new message as a banner at the top, coloured by priority, until read or closed.
  function showBanner(m) {
    S.banner = m.id;
    const b = $("banner");
    b.className = "banner p-" + m.priority; b.hidden = false;
    $("banner-meta").textContent = t(m.priority) + (m.message_type !== "broadcast" ? " · " + t(m.message_type) : "") + " · " + t("sentBy", { name: m.sender_name, time: clock(m.sent_at) });
    $("banner-text").textContent = m.message;
  }
  function hideBanner() { S.banner = null; $("banner").hidden = true; }
  $("banner-read").addEventListener("click", () => { if (S.banner) markRead(S.banner); hideBanner(); });
  $("banner-close").addEventListener("click", hideBanner);

  // ---- the emergency that holds the screen until acknowledged ----------------------------------
  function setInert(on) { for (const id of ["bar", "menu", "main"]) { $(id).inert = on; if (on) $(id).setAttribute("aria-hidden", "true"); else $(id).removeAttribute("aria-hidden"); } }
  function renderAlarm() {
    S.alarms = S.alarms.filter((id) => { const m = S.msgs.get(id); return m && !m.read && !expired(m); });
    const box = $("alarm");
    if (!S.alarms.length) {
      if (!box.hidden) { box.hidden = true; setInert(false); stopAlarm(); const f = $("list").querySelector("button"); (f || $("menu-button")).focus(); }
      return;
    }
    const m = S.msgs.get(S.alarms[0]);
    const wasHidden = box.hidden;
    box.hidden = false; setInert(true);
    $("alarm-h").textContent = m.message_type === "emergency" ? t("emergency") : t(m.priority);
    $("alarm-meta").textContent = t("sentBy", { name: m.sender_name, time: clock(m.sent_at) }) + (m.reminder ? " · " + t("reminder", { n: m.reminder }) : "");
    $("alarm-text").textContent = m.message;
    $("alarm-ack").textContent = S.acking === m.id ? t("acknowledging") : t("acknowledge");
    $("alarm-ack").dataset.id = m.id;
    $("alarm-more").textContent = S.alarms.length > 1 ? t("alarmMore", { n: S.alarms.length - 1 }) : "";
    if (wasHidden) { $("alarm-ack").focus(); startAlarm(); }
  }
  function startAlarm() {
    stopAlarm();
    const ring = () => {
      if (navigator.vibrate) navigator.vibrate([400, 150, 400, 150, 800]);
      beep();
    };
    ring(); S.alarmTimer = setInterval(ring, 3000);
  }
  function stopAlarm() { clearInterval(S.alarmTimer); S.alarmTimer = null; if (navigator.vibrate) navigator.vibrate(0); }
  let audio = null;
  function beep() {
    try {
      audio = audio || new (window.AudioContext || window.webkitAudioContext)();
      if (audio.state === "suspended") audio.resume().catch(() => {});
      const o = audio.createOscillator(), g = audio.createGain();
      o.frequency.value = 880; g.gain.value = 0.2; o.connect(g); g.connect(audio.destination);
      o.start(); o.stop(audio.currentTime + 0.4);
    } catch (_) { /* no sound here: the screen and the vibration still hold */ }
  }
  $("alarm-ack").addEventListener("click", () => {
    const id = $("alarm-ack").dataset.id; if (!id) return;
    S.acking = id; markRead(id); renderAlarm();
  });

  // ---- menu: language, event, push, sign out --------------------------------------------------
  $("menu-button").addEventListener("click", () => {
    const open = $("menu").hidden; $("menu").hidden = !open;
    $("menu-button").setAttribute("aria-expanded", String(open));
    if (open) $("lang").focus();
  });
  $("lang").addEventListener("change", () => { S.lang = $("lang").value; save(); applyText(); render(); setConn(...(S.conn || ["offline"])); });
  $("sign-out").addEventListener("click", () => {
    if (S.eventId) localStorage.removeItem(cacheKey());
    S.eventId = null; S.userId = null; S.name = ""; S.eventName = ""; signedOut("");
  });
  $("event-pick").addEventListener("change", () => {
    if (S.wsOpen && S.eventId) send({ op: "unsubscribe", event_id: S.eventId });
    S.eventId = $("event-pick").value;
    const ev = S.events.find((e) => (e.event_id || e.id) === S.eventId);
    setEventName(ev ? ev.name : ""); loadCache(); hideBanner(); render();
    if (S.wsOpen) subscribe();
  });
  async function loadEvents() {
    try {
      const r = await fetch("/v1/me/events", { headers: { "Authorization": "Bearer " + S.token }, cache: "no-store" });
      if (!r.ok) return;
      const data = await r.json();
      S.events = data.events || [];
      const pick = $("event-pick"); pick.textContent = "";
      for (const ev of S.events) { const o = el("option", null, ev.name); o.value = ev.event_id || ev.id; pick.appendChild(o); }
      pick.value = S.eventId;
      $("event-row").hidden = S.events.length < 2;
      const cur = S.events.find((ev) => (ev.event_id || ev.id) === S.eventId);
      if (cur) { setEventName(cur.name); render(); }
    } catch (_) { /* offline: the cached name stays */ }
  }

  // Web Push (docs/protocol.md, Web Push), offered only when this server answers GET /v1/push/key.
  function b64url(s) {
    const pad = "=".repeat((4 - s.length % 4) % 4);
    const raw = atob((s + pad).replace(/-/g, "+").replace(/_/g, "/"));
    return Uint8Array.from(raw, (c) => c.charCodeAt(0));
  }
  async function offerPush() {
    if (!("serviceWorker" in navigator) || !("PushManager" in window) || !S.token) return;
    let key = null;
    try { const r = await fetch("/v1/push/key", { cache: "no-store" }); if (r.ok) key = (await r.json()).public_key; } catch (_) {}
    if (!key) return;
    $("push-button").hidden = false;
    $("push-button").onclick = async () => {
      try {
        if (await Notification.requestPermission() !== "granted") { $("push-status").textContent = t("pushDenied"); return; }
        const reg = await navigator.serviceWorker.ready;
        const sub = await reg.pushManager.subscribe({ userVisibleOnly: true, applicationServerKey: b64url(key) });
        const r = await fetch("/v1/push/subscriptions", { method: "POST", cache: "no-store",
          headers: { "Authorization": "Bearer " + S.token, "Content-Type": "application/json" }, body: JSON.stringify(sub.toJSON()) });
        if (!r.ok) throw new Error("HTTP " + r.status);
        $("push-status").textContent = t("pushDone");
      } catch (err) { $("push-status").textContent = t("pushFailed", { reason: err.message || String(err) }); }
    };
  }

  // ---- checking in at a post (/checkin/EVENT/ZONE: the QR code printed for that post) ----------
  // Moves this person into the zone (out of any other), then opens the app as usual.
  async function checkIn(eventId, zone) {
    let r = null, data = null;
    try {
      r = await fetch("/v1/events/" + eventId + "/zones/" + encodeURIComponent(zone) + "/checkin", {
        method: "POST", cache: "no-store", headers: { "Authorization": "Bearer " + S.token } });
      data = await r.json().catch(() => null);
    } catch (_) {}
    history.replaceState(null, "", "/app");
    if (r && r.status === 401) { signedOut(t("tokenInvalid")); return false; }
    const reason = (data && data.error && data.error.message) || (r ? "HTTP " + r.status : t("notConnected"));
    S.checkinNote = r && r.ok ? t("checkinDone", { zone }) : t("checkinFailed", { zone, reason });
    return true;
  }

  // ---- start -----------------------------------------------------------------------------------
  applyText();
  if ("serviceWorker" in navigator) navigator.serviceWorker.register("/app/sw.js", { scope: "/app" }).catch(() => {});
  const join = location.pathname.match(/^\/join\/([A-Za-z0-9_-]{22})$/);
  if (join) { joinMode(join[1]); return; }
  const checkin = location.pathname.match(/^\/checkin\/([0-9a-f-]{36})\/([^/]+)$/);
  if (checkin && !S.token) { signedOut(t("checkinSignIn")); return; }
  if (checkin) { checkIn(checkin[1], decodeURIComponent(checkin[2])).then((ok) => { if (ok) start(); }); return; }
  start();

  function start() {
    if (!S.token || !S.eventId) { signedOut(""); return; }
    show("home");
    if (S.checkinNote) { notice(S.checkinNote, true); S.checkinNote = null; }
    $("event-name").textContent = S.eventName || "staffcast";
    loadCache(); render();
    connect(); loadEvents(); offerPush();
    window.addEventListener("online", () => { S.retry = 0; connect(); });
    document.addEventListener("visibilitychange", () => { if (!document.hidden && !S.ws) { S.retry = 0; connect(); } });
    setInterval(() => { let gone = false; for (const m of S.msgs.values()) if (expired(m)) { S.msgs.delete(m.id); gone = true; } if (gone) { render(); saveCache(); } }, 30000);
  }
})();
