/// The console's HTML (see ConsoleAsset). Plain HTML; behaviour in ConsoleScript.
enum ConsolePage {
    static let html = #"""
<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>staffcast console</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="/console/console.css">
<script src="/console/console.js" defer></script>
</head>
<body>
<header class="bar">
  <h1>staffcast <span class="sub">console</span></h1>
  <label class="event-pick" hidden id="event-pick-wrap"><span class="sr">Event</span>
    <select id="event-pick" aria-label="Event"></select></label>
  <span id="conn" class="conn" role="status" aria-live="polite">signed out</span>
  <button id="sign-out" class="ghost" hidden type="button">Sign out</button>
</header>

<main>
<section id="sign-in" class="card narrow" hidden>
  <h2>Sign in</h2>
  <p>Paste your staffcast token (from <code>staffcast admin token issue</code>). It stays in this tab only.</p>
  <form id="sign-in-form" autocomplete="off">
    <label for="token">Token</label>
    <input id="token" type="password" spellcheck="false" placeholder="sc_…" required>
    <button type="submit">Sign in</button>
    <p id="sign-in-error" class="error" role="alert"></p>
  </form>
</section>

<section id="join" class="card narrow" hidden>
  <h2>Join <span id="join-event"></span></h2>
  <p>Enter your name as the organisers should see it.</p>
  <form id="join-form" autocomplete="off">
    <label for="join-name">Your name</label>
    <input id="join-name" type="text" maxlength="200" required>
    <button type="submit">Join</button>
    <p id="join-error" class="error" role="alert"></p>
  </form>
  <div id="join-done" hidden>
    <p>You are in. <a href="/console">Open the console</a> to see the event's messages in this tab, or use the staff terminal:</p>
    <pre id="join-command"></pre>
  </div>
</section>

<div id="app" class="grid" hidden>
  <section class="card" id="send-card" aria-labelledby="send-h">
    <h2 id="send-h">Send</h2>
    <form id="send-form">
      <label for="template" id="template-label" hidden>Template</label>
      <select id="template" hidden><option value="">— none —</option></select>
      <label for="message">Message</label>
      <textarea id="message" rows="3" maxlength="4096" placeholder="Gates open in 15 minutes"></textarea>
      <div class="row">
        <div><label for="type">Type</label>
          <select id="type"><option>broadcast</option><option>alert</option><option>emergency</option></select></div>
        <div><label for="priority">Priority</label>
          <select id="priority"><option>low</option><option selected>normal</option><option>high</option><option>urgent</option></select></div>
        <div><label for="expires">Expires (min)</label>
          <input id="expires" type="number" min="1" max="43200" placeholder="never"></div>
      </div>
      <div class="row" id="schedule-row" hidden>
        <div><label for="send-at">Send at (optional)</label><input id="send-at" type="datetime-local"></div>
      </div>
      <button type="submit" id="send-button">Send</button>
      <p id="send-status" class="status" role="status" aria-live="polite"></p>
    </form>
  </section>

  <section class="card" id="messages-card" aria-labelledby="messages-h">
    <h2 id="messages-h">Messages <span id="roster" class="muted"></span></h2>
    <ol id="messages" class="messages" aria-live="polite"></ol>
    <p id="no-messages" class="muted">No messages yet.</p>
  </section>

  <section class="card" id="people-card" aria-labelledby="people-h">
    <h2 id="people-h">People <span id="people-count" class="muted"></span></h2>
    <ul id="people" class="people"></ul>
  </section>

  <section class="card" id="alerts-card" aria-labelledby="alerts-h">
    <h2 id="alerts-h">Replies and escalations</h2>
    <ol id="alerts" class="alerts" aria-live="polite"></ol>
    <p id="no-alerts" class="muted">Nothing yet.</p>
  </section>

  <section class="card" id="invite-card" aria-labelledby="invite-h">
    <h2 id="invite-h">Invite staff</h2>
    <form id="invite-form">
      <div class="row">
        <div><label for="invite-level">Level</label>
          <select id="invite-level"><option>staff</option><option>admin</option><option>owner</option></select></div>
        <div><label for="invite-expires">Valid (min)</label><input id="invite-expires" type="number" min="1" max="10080" value="60"></div>
        <div><label for="invite-uses">Uses</label><input id="invite-uses" type="number" min="1" max="10000" value="50"></div>
      </div>
      <button type="submit">Create invite</button>
      <p id="invite-status" class="status" role="status" aria-live="polite"></p>
    </form>
    <div id="invite-result" hidden>
      <img id="invite-qr" alt="QR code of the join link" width="220" height="220">
      <p><a id="invite-url" href="#"></a></p>
      <p class="muted" id="invite-facts"></p>
      <button id="invite-revoke" class="ghost" type="button">Revoke this invite</button>
    </div>
  </section>
</div>
</main>
</body>
</html>
"""#
}
