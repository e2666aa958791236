"""What the browser tests (scripts/*-browser-test.py) share: headless Chromium driven by
Selenium, one line per step on stdout, waits on conditions with deadlines, axe-core checks.
A failure prints "FAIL: reason" and exits non-zero; the Swift test that runs the script shows
its output."""
import json, os, shutil, sys, time, traceback

last_step = "(none yet)"


def fail(msg):
    print("FAIL: " + msg, flush=True)
    sys.exit(1)


def step(msg):
    global last_step
    last_step = msg
    print("ok: " + msg, flush=True)


def marker(m):
    # A line the Swift test that runs the script waits for (it acts on the server's side then).
    print(m, flush=True)


def _unexpected(kind, value, tb):
    # An exception outside a wait (an element gone, the browser crashed): one FAIL line that
    # names it and the last step that passed, then the traceback for whoever reads on.
    first = (str(value).strip().splitlines() or [""])[0]
    print("FAIL: %s after step \"%s\": %s" % (kind.__name__, last_step, first), flush=True)
    traceback.print_exception(kind, value, tb, limit=6)
    sys.stdout.flush()


sys.excepthook = _unexpected


try:
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys
    from selenium.webdriver.support.ui import WebDriverWait
except ImportError:
    fail("python selenium is not installed: run scripts/install-deps.sh (pip install selenium)")
try:
    from axe_selenium_python import Axe
except ImportError:
    fail("python axe-selenium-python is not installed: run scripts/install-deps.sh (pip install axe-selenium-python)")


class Browser:
    """One headless Chromium window of `width`x`height`; `on_timeout` (called with no
    arguments) saves what a failed wait saw, e.g. a screenshot."""

    def __init__(self, width, height, on_timeout=None, text_limit=2000, network_log=False):
        chromium = shutil.which("chromium") or shutil.which("chromium-browser")
        driver_path = shutil.which("chromedriver") or "/usr/bin/chromedriver"
        if not chromium or not os.path.exists(driver_path):
            fail("chromium and chromedriver are required: run scripts/install-deps.sh (apt-get install chromium chromium-driver)")
        opts = webdriver.ChromeOptions()
        opts.binary_location = chromium
        for a in ["--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu",
                  "--window-size=%d,%d" % (width, height), "--lang=en-GB"]:
            opts.add_argument(a)
        # network_log: Chromium's own record of the page's WebSockets (see websockets()).
        opts.set_capability("goog:loggingPrefs", {"browser": "ALL", **({"performance": "ALL"} if network_log else {})})
        # Chromium sometimes fails to start when the machine is busy ("DevToolsActivePort file
        # doesn't exist", "session not created"): three tries, then a clear failure.
        for attempt in range(3):
            try:
                self.driver = webdriver.Chrome(service=Service(driver_path), options=opts)
                break
            except Exception as e:
                first = (str(e).strip().splitlines() or [""])[0]
                print("chromium did not start (try %d of 3): %s" % (attempt + 1, first), flush=True)
                if attempt == 2:
                    fail("chromium did not start three times: " + first)
                time.sleep(2)
        self.on_timeout = on_timeout
        self.text_limit = text_limit
        self._sockets = {}

    def wait(self, cond, what, timeout=30):
        # The pages redraw their lists (live frames, polls), so an element found a moment ago
        # may be stale: a condition that raises is simply "not yet".
        def safe(_):
            try:
                return cond()
            except Exception:
                return False
        try:
            return WebDriverWait(self.driver, timeout, poll_frequency=0.1).until(safe)
        except Exception:
            if self.on_timeout:
                try:
                    self.on_timeout()
                except Exception:
                    pass
            fail("timed out waiting for " + what + "; page text:\n"
                 + self.driver.find_element(By.TAG_NAME, "body").text[:self.text_limit])

    def js(self, script, *a):
        return self.driver.execute_script(script, *a)

    def check_console(self, expected=lambda message: False):
        """Fails on an error the browser logged (level SEVERE) since the last call, unless
        `expected(message)` allows it (a refused connection while the test stops the server)."""
        errors = [e for e in self.driver.get_log("browser")
                  if e.get("level") == "SEVERE" and not expected(e.get("message", ""))]
        if errors:
            fail("the browser logged errors: " + repr(errors))

    def click(self, by, selector, what, timeout=10):
        """Finds and clicks an element of a list the page redraws (live frames, the 4 s poll):
        found a moment before the click, it may already be replaced (stale), so find and click
        again until the click lands."""
        def attempt():
            self.driver.find_element(by, selector).click()
            return True
        self.wait(attempt, what, timeout=timeout)

    def websockets(self):
        """Every WebSocket the pages opened so far (with network_log), oldest first, as the
        browser's network log saw it: {"url": the upgrade's URL, "sent": [each text frame sent]}.
        Nothing in the page is wrapped or replaced to see it."""
        for entry in self.driver.get_log("performance"):
            m = json.loads(entry["message"])["message"]
            p = m.get("params", {})
            if m.get("method") == "Network.webSocketCreated":
                self._sockets[p["requestId"]] = {"url": p["url"], "sent": []}
            elif m.get("method") == "Network.webSocketFrameSent" and p.get("requestId") in self._sockets:
                if p.get("response", {}).get("opcode") == 1:
                    self._sockets[p["requestId"]]["sent"].append(p["response"].get("payloadData", ""))
        return list(self._sockets.values())

    def join_app(self, invite, name, on_form=None):
        """Opens an invite link, joins as `name` and waits for the staff app (/app) to be live;
        `on_form()` runs while the join form shows (an axe check, say)."""
        d = self.driver
        d.get(invite)
        self.wait(lambda: d.find_element(By.ID, "join").is_displayed(), "the join form")
        if on_form:
            on_form()
        box = d.find_element(By.ID, "join-name")
        box.send_keys(name)
        box.send_keys(Keys.ENTER)
        self.wait(lambda: d.execute_script("return location.pathname") == "/app", "the app after joining")
        self.wait(lambda: d.execute_script("return document.getElementById('conn').dataset.state") == "live",
                  "the app's WebSocket to be live")

    def set_viewport(self, w, h):
        """The window sized so that the page itself (innerWidth x innerHeight) is w x h."""
        d = self.driver
        d.set_window_size(w, h)
        inner = d.execute_script("return [window.innerWidth, window.innerHeight]")
        d.set_window_size(w + (w - inner[0]), h + (h - inner[1]))
        self.wait(lambda: d.execute_script("return [window.innerWidth, window.innerHeight]") == [w, h],
                  "a %dx%d viewport" % (w, h), timeout=10)

    def axe_check(self, where):
        """axe-core on the page as it is: fails on a serious or critical violation, names the minor ones."""
        axe = Axe(self.driver)
        axe.inject()
        results = axe.run()
        bad = [v for v in results["violations"] if v.get("impact") in ("serious", "critical")]
        if bad:
            fail("axe-core on %s: %s" % (where, json.dumps([{"id": v["id"], "impact": v["impact"], "help": v["help"],
                  "nodes": [n["target"] for n in v["nodes"][:5]]} for v in bad])))
        minor = ", ".join(v["id"] + " (" + str(v.get("impact")) + ")" for v in results["violations"])
        step("axe-core on %s: no serious or critical violation%s" % (where, ("; minor: " + minor) if minor else ""))
