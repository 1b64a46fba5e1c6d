"""Headless Chromium (Debian's `chromium` package) driven over the DevTools protocol.

Chromium runs with `--remote-debugging-pipe`: commands are JSON messages ended by a NUL byte
on file descriptor 3, answers come back on descriptor 4, so no WebSocket library is needed.
WebGL draws on the CPU through SwiftShader. `screenshot(url, path, ready=...)` waits until the
JavaScript expression `ready` is true in the page (in real time, so a viewer that decompresses
its code and builds its scene has the time it needs), then writes a PNG.
"""

from __future__ import annotations

import base64
import json
import os
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

FLAGS = ["--headless=new", "--no-sandbox", "--disable-gpu-sandbox", "--no-first-run",
         "--use-angle=swiftshader", "--enable-unsafe-swiftshader", "--hide-scrollbars",
         "--disable-dev-shm-usage", "--remote-debugging-pipe", "about:blank"]


def executable() -> str | None:
    """Path of the chromium binary, or None when it is not installed."""
    return shutil.which("chromium") or shutil.which("chromium-browser")


def _pipes_at_3_and_4(reads: int, writes: int) -> None:
    """In the child: the pipe ends on the descriptors Chromium's DevTools pipe expects."""
    reads, writes = os.dup(reads), os.dup(writes)  # out of the way of 3 and 4 first
    os.dup2(reads, 3)
    os.dup2(writes, 4)


class Browser:
    """One headless Chromium process with one page attached (use as a context manager)."""

    def __init__(self, width: int = 1000, height: int = 700) -> None:
        binary = executable()
        if binary is None:
            raise FileNotFoundError("chromium is not installed (Debian: apt-get install chromium)")
        self.profile = tempfile.mkdtemp(prefix="msim-chromium-")
        to_browser, self.writer = os.pipe()
        self.reader, from_browser = os.pipe()
        self.process = subprocess.Popen(
            [binary, f"--user-data-dir={self.profile}", f"--window-size={width},{height}",
             *FLAGS],
            close_fds=False, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            env={k: v for k, v in os.environ.items() if k != "LD_PRELOAD"},  # not sanitised
            preexec_fn=lambda: _pipes_at_3_and_4(to_browser, from_browser))
        os.close(to_browser)
        os.close(from_browser)
        self.buffer, self.next_id = b"", 0
        page = next(t for t in self.call("Target.getTargets")["targetInfos"]
                    if t["type"] == "page")
        self.session = self.call("Target.attachToTarget", targetId=page["targetId"],
                                 flatten=True)["sessionId"]
        self.call("Page.enable", session=True)
        self.call("Runtime.enable", session=True)
        self.call("Emulation.setDeviceMetricsOverride", session=True, width=width,
                  height=height, deviceScaleFactor=1, mobile=False)
        self.messages: list[str] = []

    def call(self, method: str, session: bool = False, **params) -> dict:
        """Send one DevTools command and return its result (raises on an error answer)."""
        self.next_id += 1
        message = {"id": self.next_id, "method": method, "params": params}
        if session:
            message["sessionId"] = self.session
        os.write(self.writer, json.dumps(message).encode() + b"\0")
        while True:
            while b"\0" not in self.buffer:
                chunk = os.read(self.reader, 1 << 20)
                if not chunk:
                    raise RuntimeError("chromium closed its DevTools pipe")
                self.buffer += chunk
            raw, self.buffer = self.buffer.split(b"\0", 1)
            answer = json.loads(raw)
            if answer.get("method") == "Runtime.consoleAPICalled":
                args = answer["params"]["args"]
                self.messages.append(" ".join(str(a.get("value", a.get("description", "")))
                                              for a in args))
            elif answer.get("method") == "Runtime.exceptionThrown":
                self.messages.append("exception: " + json.dumps(answer["params"])[:500])
            if answer.get("id") == self.next_id:
                if "error" in answer:
                    raise RuntimeError(f"{method}: {answer['error']}")
                return answer["result"]

    def evaluate(self, expression: str):
        """The value of a JavaScript expression in the page."""
        result = self.call("Runtime.evaluate", session=True, expression=expression,
                           returnByValue=True)
        return result["result"].get("value")

    def screenshot(self, url: str, path: Path, ready: str = "document.readyState == 'complete'",
                   timeout: float = 60.0, settle: float = 1.0) -> float:
        """Open `url`, wait until `ready` is true (at most `timeout` s), let the page draw for
        `settle` s, write a PNG to `path`; returns the seconds waited."""
        start = time.monotonic()
        self.call("Page.navigate", session=True, url=url)
        while not self.evaluate(f"!!({ready})"):
            if time.monotonic() - start > timeout:
                raise TimeoutError(f"{url}: `{ready}` still false after {timeout} s; "
                                   f"console: {self.messages[-10:]}")
            time.sleep(0.2)
        time.sleep(settle)
        data = self.call("Page.captureScreenshot", session=True, format="png")["data"]
        Path(path).write_bytes(base64.b64decode(data))
        return time.monotonic() - start

    def close(self) -> None:
        self.process.kill()
        self.process.wait()
        os.close(self.writer)
        os.close(self.reader)
        shutil.rmtree(self.profile, ignore_errors=True)

    def __enter__(self) -> Browser:
        return self

    def __exit__(self, *exc) -> None:
        self.close()
