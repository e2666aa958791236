#!/usr/bin/env python3
"""The staff app (/app) and the console (/console) in a real browser (headless Chromium driven
by Selenium) while the database goes away and comes back, run by
Tests/StaffcastIntegrationTests/DatabaseDownBrowserTests.swift (it stops and starts the
cluster when this script prints STOP_DATABASE and START_DATABASE, then sends a message in
Hebrew with a poll).

The app joins with an invite and shows two unread messages; the console signs in. With the
database down, the console's WebSocket drops: it reconnects, its subscribe is refused with
`unavailable`, and it must not say "live" meanwhile. Then the app's WebSocket drops: its
refused subscribe is tried again waiting longer each time (not every 500 ms). Meanwhile, in the
app, one unread message expires: it leaves the list and the unread count. Once the database is back, both
pages subscribe again by themselves and show the Hebrew message, its text and options laid out
right to left. Both pages subscribe in the WebSocket's URL when they reconnect: the first
refusal answers that URL's ref, before any subscribe frame. A recorder wrapped around WebSocket
in each page sees the URLs and frames. Screenshots:
.build/down-*.png. One line per step; exits non-zero with a reason on a failure.
"""
import argparse, os, time, urllib.error, urllib.request

from browser_test import Browser, fail, step
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys

ap = argparse.ArgumentParser()
ap.add_argument("--url", required=True)
ap.add_argument("--invite", required=True)
ap.add_argument("--token", required=True, help="an organiser's token for the console")
ap.add_argument("--screenshots", required=True)
args = ap.parse_args()

os.makedirs(args.screenshots, exist_ok=True)
browser = Browser(800, 900, on_timeout=lambda: shot("failed"), text_limit=1500)
driver, wait, js = browser.driver, browser.wait, browser.js

# Every WebSocket of the page, what it sent and what it got, with the time.
RECORDER = """
  window.__sockets = []; window.__sent = []; window.__frames = []; window.__urls = [];
  const Native = window.WebSocket;
  window.WebSocket = class extends Native {
    constructor(url, protocols) {
      super(url, protocols); window.__sockets.push(this); window.__urls.push([Date.now(), String(url)]);
      this.addEventListener('message', (e) => { try { window.__frames.push([Date.now(), JSON.parse(e.data)]); } catch (_) {} });
    }
    send(data) { try { window.__sent.push([Date.now(), JSON.parse(data)]); } catch (_) {} return super.send(data); }
  };"""
HEBREW = "הדלת הצפונית פתוחה"


def shot(name):
    driver.save_screenshot(os.path.join(args.screenshots, "down-" + name + ".png"))


def ready():
    """/readyz: True when the server has its database, False when not, None if unreachable."""
    try:
        return urllib.request.urlopen(args.url + "/readyz", timeout=2).status == 200
    except urllib.error.HTTPError:
        return False
    except Exception:
        return None


def drop_socket():
    """Closes the page's newest WebSocket (as a network would drop it); returns the time."""
    return js("const s = window.__sockets; s[s.length - 1].close(); return Date.now()")


def refused_since(t):
    # (Any ref: the console's subscribe used to carry none.)
    return js("return window.__frames.filter(([t, f]) => t >= arguments[0] && f.op === 'error' && f.code === 'unavailable').length", t)


def url_subscribe_refused_since(t, who):
    """The first WebSocket the page opened since `t` subscribed in its URL, and the first
    `unavailable` refusal since then answered that (its ref) before any subscribe frame went."""
    got = js("""const t = arguments[0], u = window.__urls.find(([at]) => at >= t);
        const e = window.__frames.find(([at, f]) => at >= t && f.op === 'error' && f.code === 'unavailable');
        const s = window.__sent.find(([at, f]) => at >= t && f.op === 'subscribe');
        const q = u ? new URL(u[1]).searchParams : new URLSearchParams();
        return { url: u ? u[1] : null, subscribe: q.get('subscribe'), ref: q.get('ref'), refused: e ? e[1].ref || null : null,
                 frameFirst: !!(s && (!e || s[0] <= e[0])) };""", t)
    if not got["subscribe"] or not got["ref"] or got["refused"] != got["ref"] or got["frameFirst"]:
        fail("%s's reconnect did not subscribe in its URL (refused by ref): %r" % (who, got))
    return got["url"]


def app_item(text):
    return js("""const li = Array.from(document.querySelectorAll('#list li')).find((l) => l.querySelector('.text').textContent === arguments[0]);
        return li ? { cls: li.className } : null""", text)


def app_unread():
    return [driver.find_element(By.ID, "unread").text if driver.find_element(By.ID, "unread").is_displayed() else "", driver.title]


def directions(list_id, text, options):
    # The computed direction of a message's text and of its poll options (`options`: a CSS selector).
    return js("""const li = Array.from(document.querySelectorAll('#' + arguments[0] + ' li')).find((l) => (l.querySelector('.text') || {}).textContent === arguments[1]);
        return li ? [getComputedStyle(li.querySelector('.text')).direction, ...Array.from(li.querySelectorAll(arguments[2])).map((o) => getComputedStyle(o).direction)] : null""",
              list_id, text, options)


try:
    # 1. The app joins and shows the two unread messages (one expires in about 30 s).
    app_window = driver.current_window_handle
    driver.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": RECORDER})
    browser.join_app(args.invite, "Dana Down")
    expiring = "Shuttle leaves from gate 2"
    wait(lambda: app_item(expiring) and app_item("Lunch is in tent C"), "the two messages in the app")
    wait(lambda: app_unread()[0] == "2 unread" and app_unread()[1].startswith("(2) "), "2 unread in the badge and the title")
    if app_item(expiring) is None:
        fail("the expiring message expired before the app showed it (the machine is too slow for this test)")
    step("the app joined and shows 2 unread messages, one expiring soon")

    # 2. The console signs in, in a window of its own.
    driver.switch_to.new_window("window")
    console_window = driver.current_window_handle
    driver.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": RECORDER})
    driver.get(args.url + "/console")
    wait(lambda: driver.find_element(By.ID, "sign-in").is_displayed(), "the sign-in form")
    box = driver.find_element(By.ID, "token")
    box.send_keys(args.token)
    box.send_keys(Keys.ENTER)
    conn = lambda: driver.find_element(By.ID, "conn").text
    wait(lambda: "live" in conn(), "the console to be live")
    step("the console is live: " + conn())

    # 3. The database goes away; the console's WebSocket drops and comes back, but its
    # subscribe is refused: it says so, not "live", and tries again by itself.
    print("STOP_DATABASE", flush=True)
    wait(lambda: ready() is False, "the server to report its database gone", timeout=30)
    dropped = drop_socket()
    wait(lambda: refused_since(dropped) >= 1, "the console's subscribe to be refused (unavailable)", timeout=20)
    wait(lambda: "unavailable" in conn(), "the console to say it is not subscribed", timeout=5)
    end = time.time() + 3
    while time.time() < end:
        if "live" in conn():
            fail("the console says %r while its subscribe is refused" % conn())
        time.sleep(0.1)
    shot("console-unavailable")
    url = url_subscribe_refused_since(dropped, "the console")
    step("the console, reconnected while the database is down (subscribing in its URL, %s), says: %s"
         % (url.split("?", 1)[1], conn()))

    # 4. The app's WebSocket drops too: its refused subscribe is tried again, each wait longer.
    driver.switch_to.window(app_window)
    dropped = drop_socket()
    time.sleep(14)
    subs = js("return window.__sent.filter(([t, f]) => t >= arguments[0] && f.op === 'subscribe').map(([t]) => t)", dropped)
    if refused_since(dropped) < 2:
        fail("the app's subscribes were not refused while the database was down: %r" % subs)
    gaps = [(b - a) / 1000 for a, b in zip(subs, subs[1:])]
    # 0.5, 1, 2, 4 s (each plus up to 30%) after a reconnect of about 1 s: at most 6 in 14 s
    # (a retry every 500 ms made about 25).
    if len(subs) > 6 or any(b < a * 1.3 for a, b in zip(gaps, gaps[1:])):
        fail("the app's subscribes while the database is down come %d times, %r s apart: no backoff" % (len(subs), gaps))
    url = url_subscribe_refused_since(dropped, "the app")
    step("the app's reconnect subscribed in its URL (%s); its refused subscribes back off: %d frames in 14 s, %s s apart"
         % (url.split("?", 1)[1], len(subs), ", ".join("%.1f" % g for g in gaps)))

    # 5. Meanwhile, in the app, the unread message expired: it leaves the list and the count.
    # (The app drops expired messages every 30 s; this wait overlaps the 14 s above.)
    wait(lambda: app_item(expiring) is None, "the expired message to leave the app's list", timeout=90)
    if app_unread()[0] != "1 unread" or not app_unread()[1].startswith("(1) "):
        fail("after the unread message expired, the badge and title say %r (1 unread shown)" % app_unread())
    step("the expired message left the list and the unread count: %r" % app_unread())

    # 6. The database comes back: the app subscribes again by itself and shows the message
    # sent then, in Hebrew, right to left (its text and its options).
    print("START_DATABASE", flush=True)
    wait(lambda: ready() is True, "the server to have its database again", timeout=60)
    wait(lambda: app_item(HEBREW) is not None, "the app to show the message sent once the database was back", timeout=60)
    got = directions("list", HEBREW, ".poll button")
    if got != ["rtl", "rtl", "rtl"]:
        fail("the Hebrew message and its two options in the app are laid out %r, not right to left" % got)
    if directions("list", "Lunch is in tent C", ".poll button") != ["ltr"]:
        fail("an English message in the app is not left to right")
    shot("app-back")
    step("the app subscribed again by itself; the Hebrew message and its options read right to left")

    # 7. The console too: live again by itself, with the message, right to left.
    driver.switch_to.window(console_window)
    wait(lambda: "live" in conn(), "the console to be live again", timeout=60)
    wait(lambda: directions("messages", HEBREW, ".poll .opt") is not None, "the console to show the message sent once the database was back", timeout=20)
    got = directions("messages", HEBREW, ".poll .opt")
    if got != ["rtl", "rtl", "rtl"]:
        fail("the Hebrew message and its two options in the console are laid out %r, not right to left" % got)
    shot("console-back")
    step("the console subscribed again by itself (%s); the Hebrew message reads right to left" % conn())
    print("OK", flush=True)
finally:
    driver.quit()
