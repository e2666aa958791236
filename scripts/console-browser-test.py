#!/usr/bin/env python3
"""The web console in a real browser (headless Chromium driven by Selenium), run by
Tests/StaffcastIntegrationTests/ConsoleBrowserTests.swift against a server it started.

Signs in with a token, sends an urgent alert with the keyboard (the form returns to its
defaults and says whom it reached live), waits until the read count shows a reader (the Swift
test marks the message read from a staff WebSocket), keeps a refused duplicate's text with an
alert and sends it anyway, asks before an emergency, creates an invite and checks its QR code,
checks the layout at 1280x800 and the page with axe-core (no serious or critical violation, at
desktop and phone size), and writes screenshots. Prints one line per step; exits non-zero with a
reason on the first failure.
"""
import argparse, json, os, re, shutil, sys, time

from browser_test import Browser, fail, step
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.ui import Select

ap = argparse.ArgumentParser()
ap.add_argument("--url", required=True)
ap.add_argument("--token", required=True)
ap.add_argument("--message", required=True)
ap.add_argument("--screenshot", required=True)
ap.add_argument("--extra", default="")
args = ap.parse_args()

def save_failure():
    driver.save_screenshot(args.screenshot.replace(".png", "-failed.png"))

browser = Browser(1280, 1300, on_timeout=save_failure)
driver, wait = browser.driver, browser.wait

def check_console_errors(during_outage=False):
    # The page probes for optional APIs (templates, scheduling, reach) and a 404 from a server
    # without them is expected; while the server goes down and is down, refused connections
    # are too, and so is a 503 from the server while it drains ("shutting down; try again":
    # a refresh of the open receipts panel can land in that second).
    probes = ("/templates - ", "/scheduled - ", "/reach - ")
    def expected(m):
        if any(p in m for p in probes) and "status of 404" in m:
            return True
        return during_outage and ("ERR_CONNECTION_REFUSED" in m or "/v1/ws" in m or "status of 503" in m)
    browser.check_console(expected)

try:
    driver.get(args.url + "/console")
    wait(lambda: driver.find_element(By.ID, "sign-in").is_displayed(), "the sign-in form")
    step("the console loads and asks for a token")

    token_box = driver.find_element(By.ID, "token")
    token_box.send_keys(args.token)
    token_box.send_keys(Keys.ENTER)
    wait(lambda: "live" in driver.find_element(By.ID, "conn").text, "the WebSocket to be live")
    if args.token in driver.current_url:
        fail("the token is in the page URL")
    if driver.execute_script("return sessionStorage.getItem('staffcast.token')") != args.token:
        fail("the token is not in sessionStorage")
    if driver.execute_script("return localStorage.length") != 0:
        fail("something was written to localStorage")
    if driver.execute_script("return document.activeElement.id") != "message":
        fail("after signing in the keyboard is not in the message box but on %r" % driver.execute_script("return document.activeElement.id || document.activeElement.tagName"))
    step("signed in; token in sessionStorage only; WebSocket live; the keyboard in the message box")
    # An empty send is refused under the form; the refusal goes once the text changes (it stayed
    # under a later send the browser itself refused).
    driver.find_element(By.ID, "send-button").click()
    wait(lambda: "Write a message first" in driver.find_element(By.ID, "send-error").text, "the refusal of an empty message")
    driver.find_element(By.ID, "message").send_keys("x")
    wait(lambda: driver.find_element(By.ID, "send-error").text == "", "the refusal to go once the text changes")
    driver.find_element(By.ID, "message").clear()

    # Send an urgent alert with the keyboard (Ctrl+Enter in the message box).
    Select(driver.find_element(By.ID, "type")).select_by_visible_text("alert")
    Select(driver.find_element(By.ID, "priority")).select_by_visible_text("urgent")
    box = driver.find_element(By.ID, "message")
    box.send_keys(args.message)
    box.send_keys(Keys.CONTROL, Keys.ENTER)
    wait(lambda: driver.find_element(By.ID, "send-status").text.startswith("Sent."), "the send to be acknowledged")
    # Back to the defaults: the next message is not urgent by accident.
    form = driver.execute_script("return [document.getElementById('type').value, document.getElementById('priority').value, document.getElementById('message').value]")
    if form != ["broadcast", "normal", ""]:
        fail("after sending, type, priority and text are %r, not broadcast, normal and empty" % form)
    # Read the list item in one script call (the page may redraw it between two calls).
    def item():
        return driver.execute_script("""
            const li = Array.from(document.querySelectorAll('#messages li')).find((l) => l.textContent.includes(arguments[0]));
            if (!li) return null;
            const r = li.querySelector('.reads');
            return { text: li.innerText, reads: r ? r.textContent : '', count: r ? parseInt(r.dataset.readCount, 10) : 0 };
            """, args.message)
    wait(lambda: item(), "the sent message in the list")
    li = item()
    if "URGENT" not in li["text"].upper():
        fail("the message does not show its priority: " + li["text"])
    print("SENT", flush=True)  # the Swift test's staff socket receives it and marks it read
    step("sent an urgent alert; it is in the list: " + li["text"].replace("\n", " | "))
    # Whom it reached: Sam Staff's WebSocket is subscribed; Adam Admin is not connected.
    wait(lambda: re.search(r"Delivered live to 1 of 2 recipients; not connected: Adam Admin\.$", driver.find_element(By.ID, "send-status").text),
         "the reach line after the send")
    step("the form is back to its defaults and says: " + driver.find_element(By.ID, "send-status").text)

    wait(lambda: item()["count"] >= 1, "the read count to show the staff member's read", timeout=30)
    wait(lambda: "Sam Staff" in item()["text"], "the reader's name", timeout=15)
    step("the read count changed: " + item()["reads"])
    wait(lambda: "Sam Staff replied on my way" in driver.find_element(By.ID, "alerts").text, "the staff member's reply", timeout=20)
    wait(lambda: "Sam Staff: on my way" in item()["text"], "the reply under its message", timeout=10)
    step("the reply arrived live: " + driver.find_element(By.ID, "alerts").text.split("\n")[0])

    wait(lambda: "connected" in driver.find_element(By.ID, "people").text, "the people list")
    step("people: " + driver.find_element(By.ID, "people-count").text)

    def value(id):
        return driver.execute_script("return document.getElementById(arguments[0]).value", id)
    def checked(css):
        return driver.execute_script("const c = document.querySelector(arguments[0]); return c ? c.checked : null", css)
    def item_of(text):
        return driver.execute_script("""
            const li = Array.from(document.querySelectorAll('#messages li')).find((l) => (l.querySelector('.text') || {}).textContent === arguments[0]);
            if (!li) return null;
            return { id: li.dataset.id, text: li.innerText,
                     poll: Array.from(li.querySelectorAll('.poll li')).map((o) => [o.querySelector('.opt').textContent, parseInt(o.dataset.count, 10)]) };
            """, text)
    def send_now():
        driver.find_element(By.ID, "send-button").click()
        wait(lambda: driver.find_element(By.ID, "send-status").text.startswith("Sent."), "the send to be acknowledged")

    # To a team: the "To" control lists the event's teams (the Swift test made "Security" with
    # Sam Staff in it); ticking one unticks "Whole event".
    team_box = "#to-list input[data-team='Security']"
    wait(lambda: driver.find_element(By.ID, "to-set").is_displayed() and checked(team_box) is False, "the To control with the team Security")
    if checked("#to-all") is not True:
        fail("the To control does not start at the whole event")
    legend = driver.execute_script("return document.querySelector('#to-set legend').textContent")
    if legend != "To":
        fail("the audience fieldset is not labelled To: %r" % legend)
    browser.click(By.CSS_SELECTOR, team_box, "a click on the team Security")
    if checked("#to-all") or not checked(team_box):
        fail("ticking Security did not untick Whole event")
    team_text = "Security to the north gate " + args.message[-6:]
    driver.find_element(By.ID, "message").send_keys(team_text)
    send_now()
    wait(lambda: item_of(team_text), "the team message in the list")
    if "to Security" not in item_of(team_text)["text"]:
        fail("the team message does not say whom it is for: " + item_of(team_text)["text"])
    if checked("#to-all") is not True or checked(team_box) is not False:
        fail("after sending, the To control is not back to the whole event")
    wait(lambda: re.search(r"Delivered live to 1 of 2 recipients; not connected: Adam Admin\.$", driver.find_element(By.ID, "send-status").text),
         "the reach line of the team message (Security and the event's admins)")
    print("TEAM " + item_of(team_text)["id"], flush=True)  # the Swift test checks its teams over HTTP
    step("sent to team Security: " + item_of(team_text)["text"].replace("\n", " | ") + "; " + driver.find_element(By.ID, "send-status").text)

    # A Yes/No poll: the Swift test's staff socket answers Yes; the tally shows it live.
    Select(driver.find_element(By.ID, "poll-kind")).select_by_visible_text("options…")
    wait(lambda: driver.find_element(By.ID, "poll-options").is_displayed(), "the poll options box")
    if driver.execute_script("return document.activeElement.id") != "poll-options":
        fail("choosing a poll does not move the focus to its options")
    driver.find_element(By.ID, "poll-options").send_keys("Yes")
    poll_text = "Can you cover gate 4? " + args.message[-6:]
    driver.find_element(By.ID, "message").send_keys(poll_text)
    driver.find_element(By.ID, "send-button").click()
    err = driver.find_element(By.ID, "send-error")
    wait(lambda: "2 to 6 options" in err.text, "the refusal of a poll with one option")
    if value("message") != poll_text:
        fail("a refused poll lost its text")
    driver.find_element(By.ID, "poll-options").send_keys(", No")
    send_now()
    wait(lambda: item_of(poll_text) and item_of(poll_text)["poll"] == [["Yes", 0], ["No", 0]], "the poll with its options in the list")
    if value("poll-kind") != "" or driver.find_element(By.ID, "poll-options").is_displayed():
        fail("after sending, the poll control is not back to none")
    print("POLL " + item_of(poll_text)["id"], flush=True)
    wait(lambda: item_of(poll_text)["poll"] == [["Yes", 1], ["No", 0]], "the live tally of the answer (poll_tally)")
    wait(lambda: "1 of 2 answered" in item_of(poll_text)["text"], "the count of who answered")
    step("a Yes/No poll; Sam Staff answered and the tally is live: " + item_of(poll_text)["text"].replace("\n", " | "))

    # Its receipts panel: the delivery funnel (live, push, email, read) and the answers.
    poll_id = item_of(poll_text)["id"]
    browser.click(By.CSS_SELECTOR, "#messages button[data-open='%s']" % poll_id, "a click on the poll's Receipts button")
    wait(lambda: driver.find_element(By.ID, "detail").is_displayed(), "the receipts panel")
    if driver.execute_script("return document.activeElement.id") != "detail-h":
        fail("opening the receipts panel does not move the focus to it")
    def funnel():
        return driver.execute_script("""
            const o = {}; document.querySelectorAll('#funnel .step').forEach((s) => { o[s.dataset.step] = parseInt(s.querySelector('b').textContent, 10); });
            return o;""")
    wait(lambda: funnel() == {"live": 1, "push": 0, "email": 0, "read": 1}, "the funnel totals: live 1, push 0, email 0, read 1 (got %r)" % (funnel(),))
    wait(lambda: "Yes: 1 — Sam Staff" in driver.find_element(By.ID, "detail").text, "the answers in the panel")
    panel = driver.find_element(By.ID, "detail").text
    if "Sam Staff — read" not in panel or "reached by live" not in panel or "Adam Admin — not read; not reached" not in panel:
        fail("the panel does not show who was reached how: " + panel)
    # Read in one call: the list may be redrawn between a find and a read (stale element).
    if driver.execute_script("const b = document.querySelector(arguments[0]); return b && b.getAttribute('aria-expanded')",
                             "#messages button[data-open='%s']" % poll_id) != "true":
        fail("the open message's Receipts button is not aria-expanded")
    driver.save_screenshot(args.screenshot.replace(".png", "-receipts.png"))
    step("the receipts panel shows the funnel and the answers: " + panel.replace("\n", " | "))
    # The receipts as a CSV file for the safety officer, fetched with the session's token.
    driver.execute_script("""window.__csv = null; const f0 = window.fetch;
        window.fetch = async function (u, o) { const r = await f0.apply(this, arguments);
          if (String(u).includes('format=csv')) { window.__csv = await r.clone().text(); } return r; };""")
    driver.find_element(By.ID, "detail-csv").click()
    wait(lambda: driver.find_element(By.ID, "detail-csv-status").text == "Downloaded.", "the receipts CSV to download")
    csv_text = driver.execute_script("return window.__csv") or ""
    if "user_id,display_name,read" not in csv_text[:40] or "Sam Staff" not in csv_text:
        fail("the downloaded receipts CSV is %r" % csv_text[:200])
    step("the receipts panel downloads the receipts as CSV")
    # It refreshes by itself while open (push and email raise no frame): its requests repeat,
    # each asking for a few names (?limit=), never the whole lists (a megabyte at 10,000 staff).
    driver.execute_script("""window.__receipts = 0; const f = window.fetch;
        window.fetch = function (u, o) { if (/\\/receipts\\?limit=\\d+$/.test(String(u))) window.__receipts++; return f.apply(this, arguments); };""")
    wait(lambda: driver.execute_script("return window.__receipts") >= 2, "the open panel to refresh its receipts", timeout=20)
    # A read storm while it is open (the Swift test marks it read by 40 people at once, one
    # `receipt` frame each): the refreshes are coalesced, not one a frame.
    driver.execute_script("window.__receipts = 0")
    print("STORM", flush=True)
    wait(lambda: funnel().get("read") == 41, "the funnel to count the 40 readers (got %r)" % (funnel(),), timeout=30)
    asked = driver.execute_script("return window.__receipts")
    if asked > 8:
        fail("a storm of 40 receipt frames made the open panel ask for the receipts %d times" % asked)
    step("40 readers at once: the open panel asked for the receipts %d times" % asked)
    driver.find_element(By.ID, "detail-close").click()
    wait(lambda: not driver.find_element(By.ID, "detail").is_displayed(), "the panel to close")
    if driver.execute_script("return document.activeElement.dataset.open") != poll_id:
        fail("closing the panel does not return the focus to its message")
    step("the panel refreshes itself while open; closing it returns the focus to the message")

    # The safety check: "I need help" reaches the organiser as an alert.
    Select(driver.find_element(By.ID, "poll-kind")).select_by_visible_text("safety check")
    safe_text = "Safety check after the storm " + args.message[-6:]
    driver.find_element(By.ID, "message").send_keys(safe_text)
    send_now()
    wait(lambda: item_of(safe_text) and item_of(safe_text)["poll"] == [["I am safe", 0], ["I need help", 0]], "the safety check in the list")
    print("SAFE " + item_of(safe_text)["id"], flush=True)
    def help_alert():
        return driver.execute_script("""
            const li = document.querySelector('#alerts li.help');
            const a = li && li.querySelector('[role=alert]');
            return li ? { text: li.textContent, role: a ? 'alert' : null } : null;""")
    wait(lambda: help_alert() and "Sam Staff" in help_alert()["text"], "the help notification")
    if help_alert()["role"] != "alert":
        fail("the help notification is not an alert (role=alert)")
    wait(lambda: item_of(safe_text)["poll"] == [["I am safe", 0], ["I need help", 1]], "the safety check's tally")
    step("Sam Staff needs help: " + help_alert()["text"])

    # A refused send keeps the text and says why in an alert; "Send anyway" stores it.
    def count_in_list(text):
        return driver.execute_script("return Array.from(document.querySelectorAll('#messages li .text')).filter((p) => p.textContent === arguments[0]).length", text)
    dup = "Gate C is closed, use gate D " + args.message[-6:]
    box = driver.find_element(By.ID, "message")
    box.send_keys(dup)
    driver.find_element(By.ID, "send-button").click()
    wait(lambda: count_in_list(dup) == 1 and value("message") == "", "the first of two identical sends")
    box.send_keys(dup)
    driver.find_element(By.ID, "send-button").click()
    err = driver.find_element(By.ID, "send-error")
    wait(lambda: "Not sent" in err.text and err.is_displayed(), "the refused duplicate's alert")
    if err.get_attribute("role") != "alert":
        fail("the refusal is not an alert (role=alert)")
    colour = driver.execute_script("return getComputedStyle(document.getElementById('send-error')).color")
    if colour == driver.execute_script("return getComputedStyle(document.getElementById('send-status')).color"):
        fail("the refusal has the same colour as a success: " + colour)
    if value("message") != dup:
        fail("the refused text was not kept: %r" % value("message"))
    if count_in_list(dup) != 1:
        fail("the duplicate was stored although refused")
    anyway = driver.find_element(By.ID, "send-anyway")
    if not anyway.is_displayed():
        fail("no Send anyway button for a duplicate")
    step("a duplicate is refused; the text is kept; the alert says: " + err.text)
    os.makedirs(os.path.dirname(args.screenshot), exist_ok=True)
    driver.save_screenshot(args.screenshot.replace(".png", "-refused.png"))
    anyway.click()
    wait(lambda: count_in_list(dup) == 2, "the forced send to be stored")
    wait(lambda: value("message") == "" and not anyway.is_displayed() and err.text == "", "the form to clear after the forced send")
    step("Send anyway stored it (force: true) and cleared the form")

    # An emergency asks first; cancelling sends nothing and keeps the text.
    emergency = "Evacuate the north stand " + args.message[-6:]
    Select(driver.find_element(By.ID, "type")).select_by_visible_text("emergency")
    if value("priority") != "urgent":
        fail("choosing emergency did not make it urgent")
    box.send_keys(emergency)
    driver.find_element(By.ID, "send-button").click()
    wait(lambda: driver.execute_script("return document.getElementById('confirm-emergency').open"), "the emergency confirmation")
    if "Evacuate the north stand" not in driver.find_element(By.ID, "confirm-text").text:
        fail("the confirmation does not quote the message")
    driver.save_screenshot(args.screenshot.replace(".png", "-confirm.png"))
    driver.find_element(By.ID, "confirm-cancel").click()
    wait(lambda: not driver.execute_script("return document.getElementById('confirm-emergency').open"), "the confirmation to close")
    if value("message") != emergency or count_in_list(emergency) != 0:
        fail("cancelling the emergency lost the text or sent it")
    driver.find_element(By.ID, "send-button").click()
    wait(lambda: driver.execute_script("return document.getElementById('confirm-emergency').open"), "the confirmation again")
    driver.find_element(By.ID, "confirm-send").click()
    wait(lambda: count_in_list(emergency) == 1, "the confirmed emergency in the list")
    wait(lambda: value("type") == "broadcast" and value("priority") == "normal" and value("message") == "", "the form back to broadcast/normal after the emergency")

    # A template brings its own type and priority: picking "evacuate" (emergency, urgent; made
    # by the Swift test) shows them, and sending it asks first like any emergency. The form's
    # defaults used to override it: it went out as a normal broadcast, unconfirmed.
    Select(driver.find_element(By.ID, "template")).select_by_value("evacuate")
    if value("type") != "emergency" or value("priority") != "urgent":
        fail("picking the evacuate template shows %s/%s, not emergency/urgent" % (value("type"), value("priority")))
    # Its audience too (the template is for Security): "To" shows what the send carries. It
    # used to stay at "Whole event" while the send went to the template's teams.
    if checked("#to-all") or not checked(team_box):
        fail("picking the evacuate template (teams Security) left the To control at the whole event")
    driver.find_element(By.ID, "send-button").click()
    wait(lambda: driver.execute_script("return document.getElementById('confirm-emergency').open"), "the confirmation for the emergency template")
    if "everyone in Security" not in driver.find_element(By.ID, "confirm-text").text:
        fail("the confirmation of the evacuate template does not name Security: " + driver.find_element(By.ID, "confirm-text").text)
    driver.find_element(By.ID, "confirm-cancel").click()
    wait(lambda: not driver.execute_script("return document.getElementById('confirm-emergency').open"), "the confirmation to close")
    Select(driver.find_element(By.ID, "template")).select_by_value("")
    if checked("#to-all") is not True or checked(team_box):
        fail("back to no template, the To control is not back at the whole event")
    Select(driver.find_element(By.ID, "type")).select_by_visible_text("broadcast")
    Select(driver.find_element(By.ID, "priority")).select_by_visible_text("normal")
    step("a template shows its type, priority and teams; an emergency template asks first")
    step("an emergency is sent only after confirming; the form is back to broadcast")

    # An invite with its QR code, drawn by the server (no script from elsewhere).
    driver.find_element(By.CSS_SELECTOR, "#invite-form button[type=submit]").click()
    wait(lambda: driver.find_element(By.ID, "invite-result").is_displayed(), "the invite")
    src = driver.find_element(By.ID, "invite-qr").get_attribute("src") or ""
    if not src.startswith("data:image/svg+xml;base64,"):
        fail("no QR image: " + src[:80])
    wait(lambda: driver.execute_script("return document.getElementById('invite-qr').naturalWidth") > 0, "the QR image to load")
    url = driver.find_element(By.ID, "invite-url").text
    if "/join/" not in url:
        fail("no join URL: " + url)
    qr_png = os.path.join(os.path.dirname(args.screenshot), "console-qr.png")
    # The invite card scrolls inside itself on a desktop: bring the code into view first.
    driver.execute_script("document.getElementById('invite-qr').scrollIntoView({block: 'center'})")
    driver.find_element(By.ID, "invite-qr").screenshot(qr_png)
    zbar = shutil.which("zbarimg")
    if not zbar:
        fail("zbarimg (Debian zbar-tools) reads the QR code back: run scripts/install-deps.sh")
    import subprocess
    decoded = subprocess.run([zbar, "--raw", "-q", qr_png], capture_output=True, text=True).stdout.strip()
    if decoded != url:
        fail("the QR code reads %r, not the join URL %r" % (decoded, url))
    step("invite created; its QR code reads as the join URL: " + url)

    driver.execute_script("window.scrollTo(0, 0)")
    os.makedirs(os.path.dirname(args.screenshot), exist_ok=True)

    # A desktop (1280x800) shows people and escalations without scrolling.
    browser.set_viewport(1280, 800)
    browser.click(By.CSS_SELECTOR, "#messages button[data-open='%s']" % poll_id, "a click on the poll's Receipts button")
    wait(lambda: "Yes: 1" in driver.find_element(By.ID, "detail").text, "the receipts panel at 1280x800")
    for card in ["send-card", "messages-card", "people-card", "alerts-card", "detail"]:
        box = driver.execute_script("const r = document.getElementById(arguments[0]).getBoundingClientRect(); return [r.top, r.bottom, r.height]", card)
        if box[0] < 0 or box[1] > 800 or box[2] < 60:
            fail("at 1280x800, %s is not on the first screen: top %d, bottom %d, height %d" % (card, box[0], box[1], box[2]))
    page_height = driver.execute_script("return document.documentElement.scrollHeight")
    if page_height > 800 + 1:
        fail("at 1280x800 the page is %d px high: the lists should scroll inside their cards" % page_height)
    driver.save_screenshot(args.screenshot)
    step("at 1280x800 send, messages, people and escalations are all on the first screen; screenshot " + args.screenshot)

    # Every priority's badge is on screen for the contrast check (high and low failed it once).
    for prio in ("high", "low"):
        Select(driver.find_element(By.ID, "priority")).select_by_visible_text(prio)
        driver.find_element(By.ID, "message").send_keys("A %s message for the contrast check %s" % (prio, args.message[-6:]))
        send_now()
        wait(lambda: driver.find_elements(By.CSS_SELECTOR, "#messages .badge.%s" % prio), "a %s badge in the list" % prio)
    browser.axe_check("1280x800")

    browser.set_viewport(390, 844)
    overflow = driver.execute_script("return document.documentElement.scrollWidth - window.innerWidth")
    if overflow > 1:
        fail("at phone width the page scrolls sideways by %d px" % overflow)
    phone = args.screenshot.replace(".png", "-phone.png")
    driver.save_screenshot(phone)
    step("phone width fits; screenshot " + phone)
    browser.axe_check("390x844")

    # Reconnects by itself: the Swift test stops the server, sends a message meanwhile and
    # starts it again on the same port; the page must come back and catch up (since_seq).
    check_console_errors()
    step("no errors in the browser console (no CSP violation, nothing from another origin)")
    driver.set_window_size(1280, 1300)
    print("RESTART", flush=True)
    wait(lambda: "live" not in driver.find_element(By.ID, "conn").text, "the console to notice the server is gone", timeout=20)
    step("noticed the server went away: " + driver.find_element(By.ID, "conn").text)
    wait(lambda: "live" in driver.find_element(By.ID, "conn").text, "the console to reconnect", timeout=60)
    wait(lambda: "Sent while the console was away" in driver.find_element(By.ID, "messages").text,
         "the message sent while away (catch-up)", timeout=20)
    # What came as frames only while away: the help alert and the tally.
    wait(lambda: "Li Away" in driver.find_element(By.ID, "alerts").text, "the help alert raised while the console was away", timeout=20)
    wait(lambda: item_of(safe_text)["poll"] == [["I am safe", 0], ["I need help", 2]], "the safety check's tally after the catch-up", timeout=20)
    alerts = driver.execute_script("return Array.from(document.querySelectorAll('#alerts li.help')).map((l) => l.textContent)")
    if sum(1 for a in alerts if "Sam Staff" in a) != 1:
        fail("after the reconnect the first help alert is not shown exactly once: %r" % alerts)
    texts = driver.execute_script("return Array.from(document.querySelectorAll('#messages li')).map((l) => l.innerText)")
    if sum(1 for t in texts if args.message in t) != 1:
        fail("after the reconnect the first message is not shown exactly once: %r" % texts)
    step("reconnected by itself and caught up")
    check_console_errors(during_outage=True)

    # A phone that scans the invite's QR code opens its URL: the staff app asks for a name,
    # joins, and opens signed in (AppBrowserTests tests the app itself).
    driver.get(url)
    wait(lambda: driver.find_element(By.ID, "join").is_displayed(), "the join page")
    name_box = driver.find_element(By.ID, "join-name")
    name_box.send_keys("Browser Joiner")
    name_box.send_keys(Keys.ENTER)
    wait(lambda: driver.execute_script("return location.pathname") == "/app" and driver.find_element(By.ID, "home").is_displayed(), "the staff app after joining")
    step("joined through the invite page as Browser Joiner and landed in the staff app")

    print("OK", flush=True)
finally:
    driver.quit()
