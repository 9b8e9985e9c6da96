"""Cold-start benchmark: time from starting DocAtlas to its first window being painted.

Every run is a first start: a new empty home folder (so platformdirs' data, config and log
folders are created, and the Ollama set-up opens because there are no settings yet) and an
Ollama host that refuses connections at once. The window logs the moment it is first
painted (`first window painted at epoch ...`, gui/app.py); DOCATLAS_QUIT_AFTER_MS closes it.

    python bench/cold_start.py                         # the built app in build/packaging/dist/docatlas
    python bench/cold_start.py --exe /opt/docatlas/docatlas --runs 10
    python bench/cold_start.py --source                # the source tree with this Python instead
    python bench/cold_start.py --platform xvfb         # offscreen | xvfb | both (default: both if Xvfb exists)
    python bench/cold_start.py --source --cli          # `docatlas --version` and `status` instead of the window

The first run follows a page-cache drop when that is allowed (root on Linux; --no-drop-caches
skips it): that one is the real cold start, from disk. The others are warm (files cached).
Prints the figures per platform and the app folder's size; --json prints them as JSON.
Target: the first window within 3 s on the reference machine (2 cores).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_EXE = ROOT / "build" / "packaging" / "dist" / "docatlas" / "docatlas"
PAINTED = re.compile(r"first window painted at epoch ([0-9.]+)")
TARGET_S = 3.0


@dataclass
class Run:
    """One start of the window."""

    platform: str
    returncode: int
    paint_s: float | None  # start -> first paint
    total_s: float  # start -> process exit (includes DOCATLAS_QUIT_AFTER_MS)
    cold: bool
    home: str
    log: str
    ollama_port: int


def closed_port() -> int:
    """A local port nothing listens on (connections to it are refused at once)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def start_xvfb(*extra: str) -> tuple[subprocess.Popen, str]:
    """A private Xvfb server (`extra`: more Xvfb arguments); returns it and its DISPLAY."""
    if not shutil.which("Xvfb"):
        raise RuntimeError("Xvfb is not installed (Debian: apt-get install xvfb)")
    read, write = os.pipe()
    server = subprocess.Popen(["Xvfb", "-displayfd", str(write), "-screen", "0", "1600x1000x24", "-nolisten", "tcp",
                               "-noreset", *extra], pass_fds=(write,), stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL)
    os.close(write)
    with os.fdopen(read) as pipe:
        number = pipe.readline().strip()
    if not number:
        server.kill()
        raise RuntimeError("Xvfb did not start")
    return server, f":{number}"


def first_start_env(home: Path, platform: str, quit_after_ms: int, ollama_port: int,
                    display: str | None = None) -> dict[str, str]:
    """The environment of a first start in `home`: nothing inherited but PATH."""
    runtime = home / "runtime"
    runtime.mkdir(parents=True, exist_ok=True, mode=0o700)
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(home), "LANG": "C.UTF-8",
           "XDG_RUNTIME_DIR": str(runtime), "DOCATLAS_QUIT_AFTER_MS": str(quit_after_ms),
           "OLLAMA_HOST": f"127.0.0.1:{ollama_port}", "QT_QPA_PLATFORM": "xcb" if platform == "xvfb" else "offscreen"}
    if display:
        env["DISPLAY"] = display
    return env


def log_file(home: Path) -> Path:
    """Where a first start in `home` writes its log (platformdirs' user log dir on Linux)."""
    found = sorted(home.glob("**/docatlas.log"))
    return found[0] if found else home / ".local" / "state" / "DocAtlas" / "log" / "docatlas.log"


def run_gui(command: list[str], platform: str, *, quit_after_ms: int = 1500, display: str | None = None,
            cold: bool = False, wrapper: list[str] | None = None, keep_home: Path | None = None,
            timeout_s: float = 60.0) -> Run:
    """Start the window once in a new home folder, wait for it to close by itself."""
    home = keep_home or Path(tempfile.mkdtemp(prefix="docatlas-start-"))
    port = closed_port()
    env = first_start_env(home, platform, quit_after_ms, port, display)
    started = time.time()
    proc = subprocess.Popen([*(wrapper or []), *command], env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            start_new_session=True)  # its own process group: a hung run is ended whole
    try:
        out, _ = proc.communicate(timeout=timeout_s)
        returncode = proc.returncode
    except subprocess.TimeoutExpired:  # report it as a failed run, with the log
        os.killpg(proc.pid, signal.SIGKILL)  # the app and, under strace, its tracer
        out, _ = proc.communicate()
        returncode = -9
        out += f"\n[killed: still running after {timeout_s:.0f} s]".encode()
    total = time.time() - started
    log_path = log_file(home)
    text = log_path.read_text(encoding="utf-8") if log_path.exists() else ""
    match = PAINTED.search(text)
    output = out.decode("utf-8", "replace").strip()
    return Run(platform, returncode, float(match.group(1)) - started if match else None, total, cold,
               str(home), text + (f"\n[process output]\n{output}" if output else ""), port)


def drop_page_cache() -> bool:
    """Empty the kernel's page cache (Linux, root); False when not allowed."""
    try:
        os.sync()
        Path("/proc/sys/vm/drop_caches").write_text("3\n")
        return True
    except OSError:
        return False


def folder_size(path: Path) -> int:
    """Bytes in the files under `path` (links not followed)."""
    return sum(p.lstat().st_size for p in path.rglob("*") if p.is_file() and not p.is_symlink())


def summarize(runs: list[Run]) -> dict:
    """Min, median and max of the paint times, cold and warm apart."""
    painted = [r.paint_s for r in runs if r.paint_s is not None and not r.cold]
    cold = [r.paint_s for r in runs if r.paint_s is not None and r.cold]
    return {
        "runs": len(runs), "failed": sum(1 for r in runs if r.returncode != 0 or r.paint_s is None),
        "cold_s": round(cold[0], 3) if cold else None,
        "warm_min_s": round(min(painted), 3) if painted else None,
        "warm_median_s": round(statistics.median(painted), 3) if painted else None,
        "warm_max_s": round(max(painted), 3) if painted else None,
    }


def cli_starts(command: list[str], runs: int) -> dict[str, list[float]]:
    """Seconds of `--version` and of `status` on an empty workspace, each a first start in a new home."""
    out: dict[str, list[float]] = {"--version": [], "status": []}
    for _ in range(runs):
        for name, extra in (("--version", ["--version"]), ("status", ["--data-dir", "ws", "status"])):
            home = Path(tempfile.mkdtemp(prefix="docatlas-cli-"))
            env = first_start_env(home, "offscreen", 0, closed_port())
            if command[0] == sys.executable:  # --source: this checkout's code, not an installed DocAtlas
                env["PYTHONPATH"] = str(ROOT / "desktop")
            started = time.perf_counter()
            done = subprocess.run([*command, *extra], env=env, cwd=home, capture_output=True)
            out[name].append(time.perf_counter() - started)
            if done.returncode:
                print(f"{name} failed: {done.stderr.decode('utf-8', 'replace')[:300]}", file=sys.stderr)
            shutil.rmtree(home, ignore_errors=True)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--exe", type=Path, default=DEFAULT_EXE, help="the built app's executable")
    parser.add_argument("--source", action="store_true", help="start the source tree with this Python instead")
    parser.add_argument("--runs", type=int, default=5, help="starts per platform (default 5)")
    parser.add_argument("--platform", choices=("offscreen", "xvfb", "both"), default=None)
    parser.add_argument("--quit-after-ms", type=int, default=1500, help="how long each window stays open")
    parser.add_argument("--no-drop-caches", action="store_true", help="do not drop the page cache before run 1")
    parser.add_argument("--json", action="store_true", help="print the results as JSON")
    parser.add_argument("--cli", action="store_true", help="time `--version` and `status` instead of the window")
    args = parser.parse_args(argv)

    if args.source:
        command = [sys.executable, "-c", "import sys; from docatlas.cli import main; sys.exit(main())"]
        label = f"source tree ({sys.executable})"
    else:
        if not args.exe.exists():
            parser.error(f"{args.exe} does not exist; build it with packaging/linux/build.sh or pass --exe")
        command, label = [str(args.exe)], str(args.exe)
    if args.cli:
        times = cli_starts(command, args.runs)
        for name, seconds in times.items():
            print(f"docatlas {name:<9} (process start included, empty workspace): median "
                  f"{statistics.median(seconds):.2f} s, min {min(seconds):.2f} s, max {max(seconds):.2f} s "
                  f"over {len(seconds)} runs")
        return 0
    platforms = [args.platform] if args.platform and args.platform != "both" else \
        ["offscreen", "xvfb"] if (args.platform == "both" or shutil.which("Xvfb")) else ["offscreen"]

    results: dict = {"app": label, "target_s": TARGET_S, "platforms": {}}
    if not args.source:
        results["app_folder_mb"] = round(folder_size(args.exe.parent) / 2**20, 1)
    dropped = False
    for platform in platforms:
        server, display = start_xvfb() if platform == "xvfb" else (None, None)
        runs = []
        try:
            for number in range(args.runs):
                cold = number == 0 and platform == platforms[0] and not args.no_drop_caches and drop_page_cache()
                dropped = dropped or cold
                run = run_gui(command, platform, quit_after_ms=args.quit_after_ms, display=display, cold=cold)
                runs.append(run)
                if run.returncode != 0 or run.paint_s is None:
                    print(f"run {number + 1} on {platform} failed (exit {run.returncode}):\n{run.log}",
                          file=sys.stderr)
                shutil.rmtree(run.home, ignore_errors=True)
        finally:
            if server is not None:
                server.terminate()
                server.wait()
        results["platforms"][platform] = {**summarize(runs), "paint_s": [r.paint_s for r in runs],
                                          "runs_detail": [asdict(r) | {"log": None, "home": None} for r in runs]}
    results["page_cache_dropped"] = dropped

    if args.json:
        print(json.dumps(results, indent=2))
    else:
        print(f"DocAtlas cold start: {label}")
        if "app_folder_mb" in results:
            print(f"  app folder: {results['app_folder_mb']} MB")
        for platform, figures in results["platforms"].items():
            cold = f"first run (page cache {'dropped' if dropped else 'kept'}) {figures['cold_s']} s, " \
                if figures["cold_s"] is not None else ""
            print(f"  {platform:9} to the first painted window: {cold}warm min {figures['warm_min_s']} s, "
                  f"median {figures['warm_median_s']} s, max {figures['warm_max_s']} s "
                  f"over {figures['runs']} runs ({figures['failed']} failed)")
        print(f"  target: {TARGET_S} s")
    slowest = [f["cold_s"] or f["warm_max_s"] for f in results["platforms"].values()]
    failed = any(f["failed"] for f in results["platforms"].values())
    return 1 if failed or any(s is None or s > TARGET_S for s in slowest) else 0


if __name__ == "__main__":
    sys.exit(main())
