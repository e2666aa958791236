/// The console's style sheet (see ConsoleAsset).
enum ConsoleStyle {
    static let source = #"""
:root { --bg:#f4f5f7; --card:#fff; --ink:#1d2330; --muted:#667085; --line:#dde1e8; --accent:#2454d6;
  --urgent:#c62828; --high:#b26a00; --normal:#2454d6; --low:#7a8290; --ok:#1b873f; }
* { box-sizing:border-box; }
html { font:15px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, "Noto Sans", sans-serif; color:var(--ink); background:var(--bg); }
body { margin:0; }
[hidden] { display:none !important; }
.sr { position:absolute; width:1px; height:1px; overflow:hidden; clip:rect(0 0 0 0); }
.bar { display:flex; flex-wrap:wrap; align-items:center; gap:.6rem 1rem; padding:.6rem 1rem; background:#18202f; color:#fff; }
.bar h1 { font-size:1.1rem; margin:0 auto 0 0; letter-spacing:.02em; }
.bar .sub { font-weight:400; opacity:.7; }
.bar select { background:#253049; color:#fff; border:1px solid #3b4866; }
.conn { font-size:.85rem; padding:.15rem .55rem; border-radius:1rem; background:#3b4866; }
.conn.live { background:var(--ok); }
.conn.down { background:var(--urgent); }
main { padding:1rem; max-width:1200px; margin:0 auto; }
.grid { display:grid; gap:1rem; grid-template-columns:minmax(0,1fr) minmax(0,1.4fr); grid-template-areas:"send messages" "invite messages" "people alerts"; }
#send-card { grid-area:send; } #messages-card { grid-area:messages; } #people-card { grid-area:people; }
#alerts-card { grid-area:alerts; } #invite-card { grid-area:invite; }
@media (max-width: 760px) {
  .grid { grid-template-columns:minmax(0,1fr); grid-template-areas:"send" "messages" "alerts" "people" "invite"; }
  main { padding:.6rem; }
}
.card { background:var(--card); border:1px solid var(--line); border-radius:10px; padding:1rem 1.1rem; min-width:0; }
.card.narrow { max-width:28rem; margin:2rem auto; }
.card h2 { font-size:1rem; margin:0 0 .7rem; }
label { display:block; font-size:.8rem; font-weight:600; color:var(--muted); margin:.5rem 0 .2rem; }
input, select, textarea, button { font:inherit; }
input, select, textarea { width:100%; padding:.45rem .55rem; border:1px solid var(--line); border-radius:6px; background:#fff; color:var(--ink); }
textarea { resize:vertical; }
.row { display:flex; flex-wrap:wrap; gap:.6rem; } .row > div { flex:1 1 7rem; min-width:0; }
button { margin-top:.7rem; padding:.5rem 1rem; border:0; border-radius:6px; background:var(--accent); color:#fff; font-weight:600; cursor:pointer; }
button.ghost { background:transparent; border:1px solid currentColor; color:inherit; margin-top:0; padding:.3rem .7rem; }
.bar button.ghost { color:#fff; }
button:disabled { opacity:.55; cursor:default; }
:focus-visible { outline:3px solid #ffb020; outline-offset:2px; }
.error { color:var(--urgent); min-height:1em; }
.status { color:var(--muted); min-height:1em; margin:.4rem 0 0; }
.muted { color:var(--muted); font-weight:400; font-size:.85rem; }
code, pre { font-family:ui-monospace, "DejaVu Sans Mono", monospace; font-size:.85rem; }
pre { background:#f0f2f5; padding:.6rem; border-radius:6px; white-space:pre-wrap; word-break:break-all; }
ol, ul { list-style:none; margin:0; padding:0; }
.messages li { border-top:1px solid var(--line); padding:.6rem 0; }
.messages li:first-child { border-top:0; }
.messages li.fresh { animation: fresh 2s ease-out; }
@keyframes fresh { from { background:#fff6d6; } to { background:transparent; } }
.meta { display:flex; flex-wrap:wrap; align-items:center; gap:.35rem .6rem; font-size:.8rem; color:var(--muted); }
.badge { display:inline-block; padding:.05rem .45rem; border-radius:4px; font-size:.72rem; font-weight:700; letter-spacing:.03em; text-transform:uppercase; color:#fff; }
.badge.urgent { background:var(--urgent); } .badge.high { background:var(--high); }
.badge.normal { background:var(--normal); } .badge.low { background:var(--low); }
.badge.type { background:#e9ecf2; color:var(--ink); }
.text { margin:.25rem 0; white-space:pre-wrap; overflow-wrap:anywhere; }
.retracted .text { text-decoration:line-through; color:var(--muted); }
.reads { font-weight:700; color:var(--ink); }
.reads.all { color:var(--ok); }
.bar-meter { height:5px; background:#e9ecf2; border-radius:3px; overflow:hidden; margin:.3rem 0; }
.bar-meter > span { display:block; height:100%; background:var(--ok); width:0; transition:width .4s; }
.readers { font-size:.8rem; color:var(--muted); }
.replies { margin:.3rem 0 0 .2rem; font-size:.85rem; }
.replies li::before { content:"↩ "; color:var(--muted); }
.people li { display:flex; justify-content:space-between; gap:.5rem; padding:.25rem 0; border-top:1px solid var(--line); }
.people li:first-child { border-top:0; }
.dot { display:inline-block; width:.6rem; height:.6rem; border-radius:50%; background:#c3c8d2; margin-right:.4rem; }
.dot.on { background:var(--ok); }
.alerts li { padding:.4rem 0; border-top:1px solid var(--line); font-size:.9rem; }
.alerts li:first-child { border-top:0; }
.alerts li.escalation { color:var(--urgent); }
#invite-qr { display:block; background:#fff; border:1px solid var(--line); border-radius:6px; margin:.8rem 0 .4rem; max-width:100%; height:auto; }
#invite-url { word-break:break-all; }
"""#
}
